package client

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/grit-run/grit/api/gritv1"
)

// fakeTasks answers EnqueueBatch and Enqueue with what answer says, and
// counts the calls that reach it.
type fakeTasks struct {
	gritv1.UnimplementedTasksServiceServer
	calls  atomic.Int64
	answer func(n int64, ctx context.Context) error
	mu     sync.Mutex
	auth   []string
	keys   []string // the idempotency keys of Enqueue calls
}

func (f *fakeTasks) reply(ctx context.Context) error {
	n := f.calls.Add(1)
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	f.auth = append(f.auth, md.Get("authorization")...)
	f.mu.Unlock()
	if f.answer == nil {
		return nil
	}
	return f.answer(n, ctx)
}

func (f *fakeTasks) EnqueueBatch(ctx context.Context, r *gritv1.EnqueueBatchRequest) (*gritv1.EnqueueBatchResponse, error) {
	if err := f.reply(ctx); err != nil {
		return nil, err
	}
	out := make([]*gritv1.Task, len(r.GetTasks()))
	for i, t := range r.GetTasks() {
		out[i] = &gritv1.Task{Id: int64(i + 1), Kind: t.GetKind(), IdempotencyKey: t.GetIdempotencyKey()}
	}
	return &gritv1.EnqueueBatchResponse{Tasks: out}, nil
}

func (f *fakeTasks) Enqueue(ctx context.Context, r *gritv1.EnqueueRequest) (*gritv1.EnqueueResponse, error) {
	f.mu.Lock()
	f.keys = append(f.keys, r.GetTask().GetIdempotencyKey())
	f.mu.Unlock()
	if err := f.reply(ctx); err != nil {
		return nil, err
	}
	return &gritv1.EnqueueResponse{Task: &gritv1.Task{Id: 1, Kind: r.GetTask().GetKind(), IdempotencyKey: r.GetTask().GetIdempotencyKey()}}, nil
}

func serveFake(t *testing.T, f *fakeTasks) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	gritv1.RegisterTasksServiceServer(s, f)
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	return lis.Addr().String()
}

func dialFake(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := Dial(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func sendOne(t *testing.T, c *Client) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.Send(ctx, &gritv1.NewTask{Kind: "k"}).Wait(ctx)
	return err
}

// TestLayersShareOneBudget: a server that is always UNAVAILABLE gets at
// most 1 + SendRetries calls for a batch, although each of the three
// layers would retry it on its own (5 × 3 × 4 = 60 calls if they
// multiplied).
func TestLayersShareOneBudget(t *testing.T) {
	t.Parallel()
	for _, retries := range []int{1, 3} {
		f := &fakeTasks{answer: func(int64, context.Context) error { return status.Error(codes.Unavailable, "down") }}
		c := dialFake(t, Config{Addr: serveFake(t, f), SendRetries: retries, SendBackoff: time.Millisecond})
		err := sendOne(t, c)
		if Code(err) != codes.Unavailable {
			t.Errorf("retries %d: %v, want UNAVAILABLE", retries, err)
		}
		if n := f.calls.Load(); n != int64(1+retries) {
			t.Errorf("retries %d: the server got %d calls, want %d (1 + the budget)", retries, n, 1+retries)
		}
	}
}

// TestRetriesOff: with SendRetries negative, no layer retries.
func TestRetriesOff(t *testing.T) {
	t.Parallel()
	f := &fakeTasks{answer: func(int64, context.Context) error { return status.Error(codes.Unavailable, "down") }}
	c := dialFake(t, Config{Addr: serveFake(t, f), SendRetries: -1})
	if err := sendOne(t, c); Code(err) != codes.Unavailable || f.calls.Load() != 1 {
		t.Errorf("%v after %d calls, want UNAVAILABLE after 1", err, f.calls.Load())
	}
	if _, err := c.Enqueue(context.Background(), &gritv1.NewTask{Kind: "k"}); Code(err) != codes.Unavailable || f.calls.Load() != 2 {
		t.Errorf("enqueue: %v after %d calls, want UNAVAILABLE after 1 more", err, f.calls.Load())
	}
}

// TestCallLayerCutsASlowAttempt: an attempt past Timeout is cut and tried
// again, with the same idempotency key.
func TestCallLayerCutsASlowAttempt(t *testing.T) {
	t.Parallel()
	f := &fakeTasks{}
	f.answer = func(n int64, ctx context.Context) error {
		if n == 1 {
			<-ctx.Done() // the first attempt hangs until the client gives up on it
			return ctx.Err()
		}
		return nil
	}
	c := dialFake(t, Config{Addr: serveFake(t, f), Timeout: 200 * time.Millisecond})
	got, err := c.Enqueue(context.Background(), &gritv1.NewTask{Kind: "k"})
	if err != nil || f.calls.Load() != 2 {
		t.Fatalf("%v after %d calls, want success on the second", err, f.calls.Load())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if got.Task.GetIdempotencyKey() == "" || len(f.keys) != 2 || f.keys[0] != f.keys[1] {
		t.Errorf("idempotency keys sent %q: want one key, the same on both attempts", f.keys)
	}
}

// TestPermanentFailsItsBatchAtOnce: INVALID_ARGUMENT is not retried; the
// batch's callers get it and the next batch goes through.
func TestPermanentFailsItsBatchAtOnce(t *testing.T) {
	t.Parallel()
	f := &fakeTasks{answer: func(n int64, _ context.Context) error {
		if n == 1 {
			return status.Error(codes.InvalidArgument, "tasks[0].kind: bad")
		}
		return nil
	}}
	c := dialFake(t, Config{Addr: serveFake(t, f), Token: "s3cret"})
	if err := sendOne(t, c); Code(err) != codes.InvalidArgument || f.calls.Load() != 1 {
		t.Errorf("%v after %d calls, want INVALID_ARGUMENT after 1", err, f.calls.Load())
	}
	if err := sendOne(t, c); err != nil {
		t.Errorf("the next batch: %v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.auth) != 2 || f.auth[0] != "Bearer s3cret" {
		t.Errorf("authorization headers %q, want the token on each call", f.auth)
	}
}

func TestFromEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"GRIT_SERVER": "h:1", "GRIT_GRPC_TIMEOUT": "2.5", "GRIT_SEND_RETRIES": "0", "GRIT_FLUSH_INTERVAL": "20ms", "GRIT_TOKEN": "x"}
	c, knobs, err := FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "h:1" || c.Timeout != 2500*time.Millisecond || c.SendRetries != -1 || c.FlushInterval != 20*time.Millisecond ||
		c.MaxBatchSize != 50 || c.SendBackoff != 100*time.Millisecond || c.Token != "x" {
		t.Errorf("config %+v", c)
	}
	srcs := map[string]string{}
	for _, k := range knobs {
		srcs[k.Env] = k.Source
	}
	if srcs["GRIT_GRPC_TIMEOUT"] != "env GRIT_GRPC_TIMEOUT" || srcs["GRIT_MAX_BATCH_SIZE"] != "default" {
		t.Errorf("sources %v", srcs)
	}
	bad := map[string]string{"GRIT_GRPC_TIMEOUT": "soon", "GRIT_MAX_BATCH_SIZE": "-1"}
	if _, _, err := FromEnv(func(k string) string { return bad[k] }); err == nil ||
		!strings.Contains(err.Error(), `GRIT_GRPC_TIMEOUT="soon": want a positive duration`) || !strings.Contains(err.Error(), "GRIT_MAX_BATCH_SIZE") {
		t.Errorf("bad values: %v", err)
	}
}
