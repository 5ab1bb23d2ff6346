package gritbench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/grit-run/grit/api/client"
	"github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/batch"
	"github.com/grit-run/grit/store"
)

// APIEnqueue is the enqueue throughput through the gRPC API: a server in
// this process on 127.0.0.1, over the bench's store, and the Go client
// over real loopback connections, from Callers concurrent callers. Single
// is one Enqueue call per task; Batched is Send, in EnqueueBatch calls of
// up to Batch tasks, every future waited on. The client gives every task
// an idempotency key, as it does for users.
type APIEnqueue struct {
	APITasks         int     `json:"api_tasks,omitempty"` // per mode
	APICallers       int     `json:"api_callers,omitempty"`
	APIBatch         int     `json:"api_batch_size,omitempty"` // the client's MaxBatchSize
	APIBatchMean     float64 `json:"api_batch_mean,omitempty"` // tasks per EnqueueBatch call sent
	APISinglePerSec  float64 `json:"api_enqueue_single_per_s,omitempty"`
	APIBatchedPerSec float64 `json:"api_enqueue_batched_per_s,omitempty"`
	// Batched over single, and batched over the store's own enqueue in
	// calls of Config.Batch (EnqueuePerSec).
	APIBatchedVsSingle float64 `json:"api_batched_vs_single,omitempty"`
	APIBatchedVsDirect float64 `json:"api_batched_vs_direct,omitempty"`
}

// apiMode enqueues share tasks through c as one caller and returns the ids
// the server answered.
type apiMode func(ctx context.Context, c *client.Client, share int) ([]int64, error)

// apiEnqueue measures both modes, each on a fresh store with a server of
// its own; it runs after enqueue, whose figure the ratio is taken to.
func apiEnqueue(ctx context.Context, open Opener, cfg Config, r *Result) error {
	a := APIEnqueue{APITasks: cfg.APITasks, APICallers: cfg.APICallers, APIBatch: cfg.APIBatch}
	var err error
	if a.APISinglePerSec, _, err = overAPI(ctx, open, cfg, enqueueEach); err != nil {
		return fmt.Errorf("one Enqueue call per task: %w", err)
	}
	var calls *batchCount
	if a.APIBatchedPerSec, calls, err = overAPI(ctx, open, cfg, sendAll); err != nil {
		return fmt.Errorf("Send in batches of %d: %w", cfg.APIBatch, err)
	}
	a.APIBatchMean = calls.mean()
	a.APIBatchedVsSingle = a.APIBatchedPerSec / a.APISinglePerSec
	if r.EnqueuePerSec > 0 {
		a.APIBatchedVsDirect = a.APIBatchedPerSec / r.EnqueuePerSec
	}
	r.APIEnqueue = a
	return nil
}

// enqueueEach makes one Enqueue call per task, waiting for each.
func enqueueEach(ctx context.Context, c *client.Client, share int) ([]int64, error) {
	ids := make([]int64, share)
	for i := range ids {
		t, err := c.Enqueue(ctx, &gritv1.NewTask{Kind: kindNoop})
		if err != nil {
			return nil, fmt.Errorf("task %d of %d: %w", i+1, share, err)
		}
		ids[i] = t.Task.GetId()
	}
	return ids, nil
}

// sendAll sends every task of the share, then waits on every future, as a
// producer that does not wait for each task before the next does.
func sendAll(ctx context.Context, c *client.Client, share int) ([]int64, error) {
	fs := make([]*batch.Future[client.Enqueued], share)
	for i := range fs {
		fs[i] = c.Send(ctx, &gritv1.NewTask{Kind: kindNoop})
	}
	ids := make([]int64, share)
	for i, f := range fs {
		t, err := f.Wait(ctx)
		if err != nil {
			return nil, fmt.Errorf("task %d of %d: %w", i+1, share, err)
		}
		ids[i] = t.Task.GetId()
	}
	return ids, nil
}

// overAPI serves a fresh store, times cfg.APICallers callers enqueueing
// cfg.APITasks tasks through it with mode, and checks that the store then
// holds exactly those tasks, each once.
func overAPI(ctx context.Context, open Opener, cfg Config, mode apiMode) (float64, *batchCount, error) {
	var perSec float64
	calls := &batchCount{}
	err := withTarget(open, func(tg Target) (err error) {
		addr, stop, err := serveAPI(ctx, tg.Store)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, stop()) }()
		c, err := client.Dial(client.Config{Addr: addr, MaxBatchSize: cfg.APIBatch}, grpc.WithChainUnaryInterceptor(calls.count))
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, c.Close(ctx)) }()
		begin := time.Now()
		ids, err := callers(ctx, cfg.APICallers, cfg.APITasks, func(ctx context.Context, share int) ([]int64, error) {
			return mode(ctx, c, share)
		})
		if err != nil {
			return err
		}
		perSec = float64(cfg.APITasks) / time.Since(begin).Seconds()
		return exactlyOnce(ctx, tg.Store, ids, cfg.APITasks)
	})
	return perSec, calls, err
}

// serveAPI serves st's API on a loopback port until stop, which returns
// Serve's error. Nothing is rescued: no worker of the bench dies.
func serveAPI(ctx context.Context, st store.Store) (addr string, stop func() error, err error) {
	s, err := server.New(server.Config{Store: st, Rescue: -1})
	if err != nil {
		return "", nil, err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- s.Serve(sctx, lis) }()
	return lis.Addr().String(), func() error {
		cancel()
		if err := <-served; err != nil {
			return fmt.Errorf("serve the API: %w", err)
		}
		return nil
	}, nil
}

// callers runs n callers that share total tasks between them and returns
// the ids they got. The first error cancels the others and is returned,
// naming its caller.
func callers(ctx context.Context, n, total int, fn func(ctx context.Context, share int) ([]int64, error)) ([]int64, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	got := make([][]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		share := total / n
		if i < total%n {
			share++
		}
		wg.Go(func() {
			var err error
			if got[i], err = fn(ctx, share); err != nil {
				cancel(fmt.Errorf("caller %d of %d: %w", i+1, n, err))
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err // the first error, or the bench's own cancellation
	}
	var ids []int64
	for _, g := range got {
		ids = append(ids, g...)
	}
	return ids, nil
}

// exactlyOnce checks that the server answered n distinct tasks and that
// the store holds n tasks: none lost, none made twice by a retry.
func exactlyOnce(ctx context.Context, st store.Store, ids []int64, n int) error {
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		seen[id] = true
	}
	if len(ids) != n || len(seen) != n {
		return fmt.Errorf("%d tasks sent, %d answered, %d distinct ids", n, len(ids), len(seen))
	}
	stored, err := countAll(ctx, st)
	if err != nil {
		return fmt.Errorf("count the stored tasks: %w", err)
	}
	if stored != n {
		return fmt.Errorf("%d tasks sent and answered, but the store holds %d", n, stored)
	}
	return nil
}

// countAll is how many tasks the store holds, in any state.
func countAll(ctx context.Context, st store.Store) (int, error) {
	o, ok := st.(store.Overview)
	if !ok {
		return 0, errors.New("the store cannot count tasks")
	}
	qs, err := o.QueueCounts(ctx)
	n := 0
	for _, q := range qs {
		n += q.N
	}
	return n, err
}

// batchCount counts the EnqueueBatch calls the client makes, retries
// included, and the tasks they carry.
type batchCount struct{ calls, tasks atomic.Int64 }

func (b *batchCount) count(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if r, ok := req.(*gritv1.EnqueueBatchRequest); ok {
		b.calls.Add(1)
		b.tasks.Add(int64(len(r.GetTasks())))
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

func (b *batchCount) mean() float64 {
	return float64(b.tasks.Load()) / float64(max(b.calls.Load(), 1))
}
