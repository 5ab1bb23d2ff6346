package client_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/grit-run/grit/api/client"
	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/batch"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/store/sqlite/sqlitetest"
	"github.com/grit-run/grit/task"
)

// The incident at a tenth of its time: the callers' deadline is 3s (30s).
// (Under -race on a loaded machine of two cores the server takes up to a
// second to store a batch of 50: a twentieth would leave it too little.)
const deadline = 3 * time.Second

// faults is a server interceptor that answers EnqueueBatch as the incident
// did: the first call slowly, once the second has reached the server too,
// and the second too late: it stores the tasks, then answers only once
// the test has seen its callers end (answerLate), so that the answer is
// lost however busy the machine. The burst makes a batch of 50 and one of
// 42 when its callers come in together, and other batches when a busy
// machine spreads them over the client's flush interval: the faults, and
// the tests, follow the calls whatever their sizes. It records the
// callers and idempotency keys of the late call, and how many of those
// keys later calls sent again.
type faults struct {
	calls    atomic.Int64
	second   chan struct{} // closed when the second call reaches the server
	answer   chan struct{} // closed by answerLate
	answered sync.Once
	stored   chan struct{} // closed once the late call has stored its tasks

	mu      sync.Mutex
	sizes   []int          // each call's tasks, in the order they came
	late    map[string]int // the late call's idempotency keys, to the times sent again
	callers map[string]bool
}

func newFaults() *faults {
	return &faults{second: make(chan struct{}), answer: make(chan struct{}), stored: make(chan struct{}),
		late: map[string]int{}, callers: map[string]bool{}}
}

// answerLate lets the late call answer, once its callers have ended.
func (f *faults) answerLate() { f.answered.Do(func() { close(f.answer) }) }

// waitLate answers the late call and waits until it has stored its tasks:
// its callers may have ended before, at their deadline.
func (f *faults) waitLate(t *testing.T) {
	t.Helper()
	f.answerLate()
	select {
	case <-f.stored:
	case <-time.After(20 * time.Second):
		t.Fatal("the late call did not store its tasks within 20s")
	}
}

func (f *faults) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	r, ok := req.(*pb.EnqueueBatchRequest)
	if !ok {
		return handler(ctx, req)
	}
	n := f.record(r)
	switch n {
	case 1:
		resp, err := handler(ctx, req)
		select { // slow: still unanswered while the second call is made
		case <-f.second:
		case <-ctx.Done():
		}
		return resp, err
	case 2:
		close(f.second)
		// Stored whatever time the store takes, and answered after the
		// callers have ended: the answer is lost.
		resp, err := handler(context.WithoutCancel(ctx), req)
		close(f.stored)
		<-f.answer
		return resp, err
	}
	return handler(ctx, req)
}

// record counts a call and returns its number; it notes the second's
// callers and keys, and the keys of the second that later calls send.
func (f *faults) record(r *pb.EnqueueBatchRequest) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.calls.Add(1)
	f.sizes = append(f.sizes, len(r.GetTasks()))
	for _, tk := range r.GetTasks() {
		switch {
		case n == 2:
			f.late[tk.GetIdempotencyKey()] = 0
			f.callers[string(tk.GetArgs())] = true
		case n > 2:
			if _, ok := f.late[tk.GetIdempotencyKey()]; ok {
				f.late[tk.GetIdempotencyKey()]++
			}
		}
	}
	return n
}

// lateCall returns the late call's callers (by their task's args), how
// many of its keys later calls sent again, and every call's size.
func (f *faults) lateCall() (callers map[string]bool, resent int, sizes []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, times := range f.late {
		if times > 0 {
			resent++
		}
	}
	return f.callers, resent, slices.Clone(f.sizes)
}

// serveFaulty runs a real server on a SQLite store, behind f.
func serveFaulty(t *testing.T, f *faults) (string, store.Store) {
	t.Helper()
	addr, st := serveWith(t, f.intercept)
	t.Cleanup(f.answerLate) // before the server stops
	return addr, st
}

// serveWith runs a real server on a SQLite store, behind intercept.
func serveWith(t *testing.T, intercept grpc.UnaryServerInterceptor) (string, store.Store) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s, err := server.New(server.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(append(s.ServerOptions(), grpc.ChainUnaryInterceptor(intercept))...)
	s.Register(gs)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	return lis.Addr().String(), st
}

// burst sends 92 tasks from 92 callers started at once and returns each
// caller's result.
func burst(t *testing.T, c *client.Client) ([]*pb.Task, []error) {
	t.Helper()
	const callers = 92
	tasks, errs := make([]*pb.Task, callers), make([]error, callers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			<-start
			var e client.Enqueued
			e, errs[i] = c.Send(ctx, &pb.NewTask{Kind: "signal", Args: fmt.Appendf(nil, `{"caller": %d}`, i)}).Wait(ctx)
			tasks[i] = e.Task
		})
	}
	close(start)
	wg.Wait()
	return tasks, errs
}

func dial(t *testing.T, addr string, retries int) *client.Client {
	t.Helper()
	c, err := client.Dial(client.Config{Addr: addr, Timeout: deadline, MaxBatchSize: 50, FlushInterval: 50 * time.Millisecond, SendRetries: retries})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func stored(t *testing.T, st store.Store) map[string]int {
	t.Helper()
	ts, err := st.ListTasks(context.Background(), task.Filter{Kind: "signal"})
	if err != nil {
		t.Fatal(err)
	}
	byArgs := map[string]int{}
	for _, tk := range ts {
		byArgs[string(tk.Args)]++
	}
	return byArgs
}

// TestIncidentAbsorbed: 92 callers at once, batches of 50; the first
// batch is answered slowly, the second past the deadline. With the retry
// layers on, every caller succeeds and each task exists exactly once: the
// second batch's retry carries the same idempotency keys as the attempt
// whose answer was lost, every one of them.
func TestIncidentAbsorbed(t *testing.T) {
	t.Parallel()
	f := newFaults()
	addr, st := serveFaulty(t, f)
	c := dial(t, addr, 3)
	tasks, errs := burst(t, c)
	f.waitLate(t)
	ids := map[int64]bool{}
	for i, err := range errs {
		if err != nil {
			t.Errorf("caller %d: %v", i, err)
			continue
		}
		if got, err := st.GetTask(context.Background(), tasks[i].GetId()); err != nil || string(got.Args) != fmt.Sprintf(`{"caller": %d}`, i) {
			t.Errorf("caller %d got task %d, of %s (%v): want its own", i, tasks[i].GetId(), got.Args, err)
		}
		ids[tasks[i].GetId()] = true
	}
	if len(ids) != 92 {
		t.Errorf("%d distinct tasks among the callers, want 92", len(ids))
	}
	byArgs := stored(t, st)
	for i := range 92 {
		if n := byArgs[fmt.Sprintf(`{"caller": %d}`, i)]; n != 1 {
			t.Errorf("caller %d's task is stored %d times, want once", i, n)
		}
	}
	callers, resent, sizes := f.lateCall()
	if len(callers) == 0 || resent != len(callers) {
		t.Errorf("%d of the late call's %d tasks sent again (calls of %v tasks), want all: its retry carries the same idempotency keys", resent, len(callers), sizes)
	}
}

// TestIncidentWithoutRetries: the same burst with every retry layer off
// fails as the incident did: every caller of the late batch (the 42 of
// the second) gets DEADLINE_EXCEEDED, although the server stored their
// tasks, and the others succeed. The client still serves the next caller.
func TestIncidentWithoutRetries(t *testing.T) {
	t.Parallel()
	f := newFaults()
	addr, st := serveFaulty(t, f)
	c := dial(t, addr, -1)
	_, errs := burst(t, c)
	f.waitLate(t)
	callers, resent, sizes := f.lateCall()
	if len(callers) == 0 || resent != 0 {
		t.Errorf("calls of %v tasks, %d of the late call's sent again: want a late call, and no retry", sizes, resent)
	}
	for i, err := range errs {
		late := callers[fmt.Sprintf(`{"caller": %d}`, i)]
		switch {
		case late && client.Code(err) != codes.DeadlineExceeded:
			t.Errorf("caller %d of the late call: %v, want DEADLINE_EXCEEDED", i, err)
		case !late && err != nil:
			t.Errorf("caller %d, not of the late call: %v", i, err)
		}
	}
	if n := len(stored(t, st)); n != 92 {
		t.Errorf("%d tasks stored, want 92: the late batch was stored, its answer lost (calls of %v tasks)", n, sizes)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Send(ctx, &pb.NewTask{Kind: "signal", Args: []byte(`{"caller": "after"}`)}).Wait(ctx); err != nil {
		t.Errorf("a send after the failed batch: %v", err)
	}
}

// TestRejectedBatchFailsAtOnce: a batch the server rejects (one task of
// it is malformed) fails every caller of it at once, without a retry, with
// the server's reason; nothing of it is stored, and the next batch goes
// through.
func TestRejectedBatchFailsAtOnce(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	addr, st := serveWith(t, func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if _, ok := req.(*pb.EnqueueBatchRequest); ok {
			calls.Add(1)
		}
		return handler(ctx, req)
	})
	c := dial(t, addr, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	good := c.Send(ctx, &pb.NewTask{Kind: "signal", Args: []byte(`{"caller": 1}`)})
	bad := c.Send(ctx, &pb.NewTask{Kind: "bad kind!", Args: []byte(`{}`)})
	for _, fu := range []*batch.Future[client.Enqueued]{good, bad} {
		if _, err := fu.Wait(ctx); client.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), `tasks[1].kind`) {
			t.Errorf("%v, want INVALID_ARGUMENT naming tasks[1].kind", err)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d EnqueueBatch calls, want 1: a rejection is not retried", n)
	}
	if n := len(stored(t, st)); n != 0 {
		t.Errorf("%d tasks stored from the rejected batch, want none", n)
	}
	if _, err := c.Send(ctx, &pb.NewTask{Kind: "signal", Args: []byte(`{"caller": 2}`)}).Wait(ctx); err != nil {
		t.Errorf("the next batch: %v", err)
	}
}
