package client_test

import (
	"context"
	"fmt"
	"net"
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

// The incident at a twentieth of its time: the first batch is answered in
// 850ms (17s), the second not before the callers' 1.5s deadline (30s).
// (A hundredth would leave the server too little time under -race on a
// loaded machine.)
const (
	slowAnswer = 850 * time.Millisecond
	deadline   = 1500 * time.Millisecond
)

// faults is a server interceptor that delays EnqueueBatch answers as the
// incident did: the batch of 50 is slow, and the first call with the batch
// of 42 is answered too late, after the server has stored its tasks. It
// counts the EnqueueBatch calls that reach the server.
type faults struct {
	calls    atomic.Int64
	lateOnce sync.Once
}

func (f *faults) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	r, ok := req.(*pb.EnqueueBatchRequest)
	if !ok {
		return handler(ctx, req)
	}
	f.calls.Add(1)
	resp, err := handler(ctx, req)
	switch len(r.GetTasks()) {
	case 50:
		time.Sleep(slowAnswer)
	case 42:
		late := false
		f.lateOnce.Do(func() { late = true })
		if late {
			time.Sleep(deadline + 500*time.Millisecond) // stored, but the answer is lost
		}
	}
	return resp, err
}

// serveFaulty runs a real server on a SQLite store, behind f.
func serveFaulty(t *testing.T, f *faults) (string, store.Store) {
	t.Helper()
	return serveWith(t, f.intercept)
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
// whose answer was lost.
func TestIncidentAbsorbed(t *testing.T) {
	f := &faults{}
	addr, st := serveFaulty(t, f)
	c := dial(t, addr, 3)
	tasks, errs := burst(t, c)
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
	// Three calls: the two batches, and the second's retry. A machine so
	// busy that the slow batch's answer also passes its deadline adds that
	// batch's retry; fewer means the lost answer was not retried.
	if n := f.calls.Load(); n < 3 || n > 4 {
		t.Errorf("%d EnqueueBatch calls, want 3: the two batches, and the second's one retry", n)
	}
}

// TestIncidentWithoutRetries: the same burst with every retry layer off
// fails as the incident did: all 42 callers of the second batch get
// DEADLINE_EXCEEDED, although the server stored their tasks. The client
// still serves the next caller.
func TestIncidentWithoutRetries(t *testing.T) {
	f := &faults{}
	addr, st := serveFaulty(t, f)
	c := dial(t, addr, -1)
	_, errs := burst(t, c)
	failed := 0
	for i, err := range errs {
		if err != nil {
			failed++
			if client.Code(err) != codes.DeadlineExceeded {
				t.Errorf("caller %d: %v, want DEADLINE_EXCEEDED", i, err)
			}
		}
	}
	if failed != 42 {
		t.Errorf("%d callers failed, want the 42 of the second batch", failed)
	}
	if n := len(stored(t, st)); n != 92 {
		t.Errorf("%d tasks stored, want 92: the late batch was stored, its answer lost", n)
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
	f := &faults{}
	addr, st := serveFaulty(t, f)
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
	if n := f.calls.Load(); n != 1 {
		t.Errorf("%d EnqueueBatch calls, want 1: a rejection is not retried", n)
	}
	if n := len(stored(t, st)); n != 0 {
		t.Errorf("%d tasks stored from the rejected batch, want none", n)
	}
	if _, err := c.Send(ctx, &pb.NewTask{Kind: "signal", Args: []byte(`{"caller": 2}`)}).Wait(ctx); err != nil {
		t.Errorf("the next batch: %v", err)
	}
}
