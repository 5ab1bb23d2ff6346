package gritbench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/grit-run/grit/api/client"
	"github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// RemoteWork is the throughput of no-op tasks worked end to end by remote
// workers: a server in this process on 127.0.0.1 over the bench's store,
// and RemoteWorkers workers on the Go client over real loopback
// connections, each claiming up to RemoteClaim tasks a call. Batched
// reports a claim's results in one Report call; Single reports each by
// its own Complete call, the claim's calls at once, as a worker with a
// slot per task would. Each is taken against the in-process engine's
// work figure on the same kind of store (WorkPerSec).
type RemoteWork struct {
	RemoteTasks   int `json:"remote_tasks,omitempty"` // per mode: Config.Tasks
	RemoteWorkers int `json:"remote_workers,omitempty"`
	RemoteClaim   int `json:"remote_claim_limit,omitempty"`
	// Tasks per claim the workers got, and results per Report call sent.
	RemoteClaimMean     float64 `json:"remote_claim_mean,omitempty"`
	RemoteReportMean    float64 `json:"remote_report_mean,omitempty"`
	RemoteBatchedPerSec float64 `json:"remote_work_batched_per_s,omitempty"`
	RemoteSinglePerSec  float64 `json:"remote_work_single_per_s,omitempty"`
	// Each mode over the in-process engine's work, and batched over
	// single.
	RemoteBatchedVsGo     float64 `json:"remote_batched_vs_go,omitempty"`
	RemoteSingleVsGo      float64 `json:"remote_single_vs_go,omitempty"`
	RemoteBatchedVsSingle float64 `json:"remote_batched_vs_single,omitempty"`
}

// reportMode reports the results of one claim's tasks, every one a
// success, and returns an error for any result the server refused.
type reportMode func(ctx context.Context, c *client.Client, worker string, ts []*gritv1.Task) error

// remoteWork measures both modes, each on a fresh store with a server of
// its own; it runs after work, whose figure the ratios are taken to.
func remoteWork(ctx context.Context, open Opener, cfg Config, r *Result) error {
	w := RemoteWork{RemoteTasks: cfg.Tasks, RemoteWorkers: cfg.RemoteWorkers, RemoteClaim: cfg.RemoteClaim}
	var calls *remoteCount
	var err error
	if w.RemoteBatchedPerSec, calls, err = workRemotely(ctx, open, cfg, reportClaim); err != nil {
		return fmt.Errorf("one Report call per claim: %w", err)
	}
	w.RemoteClaimMean, w.RemoteReportMean = calls.means()
	if w.RemoteSinglePerSec, _, err = workRemotely(ctx, open, cfg, completeEach); err != nil {
		return fmt.Errorf("one Complete call per task: %w", err)
	}
	w.RemoteBatchedVsSingle = w.RemoteBatchedPerSec / w.RemoteSinglePerSec
	if r.WorkPerSec > 0 {
		w.RemoteBatchedVsGo = w.RemoteBatchedPerSec / r.WorkPerSec
		w.RemoteSingleVsGo = w.RemoteSinglePerSec / r.WorkPerSec
	}
	r.RemoteWork = w
	return nil
}

// reportClaim reports a claim's results in one Report call.
func reportClaim(ctx context.Context, c *client.Client, worker string, ts []*gritv1.Task) error {
	rs := make([]*gritv1.Result, len(ts))
	for i, t := range ts {
		rs[i] = &gritv1.Result{TaskId: t.GetId(), LeaseToken: t.GetLeaseToken(), End: &gritv1.Result_Complete{Complete: &gritv1.Completed{}}}
	}
	as, err := c.Report(ctx, worker, rs)
	if err != nil {
		return err
	}
	for i, a := range as {
		if err := client.ReportError(a); err != nil {
			return fmt.Errorf("task %d: %w", ts[i].GetId(), err)
		}
	}
	return nil
}

// completeEach reports each of a claim's results by its own Complete
// call, all at once.
func completeEach(ctx context.Context, c *client.Client, worker string, ts []*gritv1.Task) error {
	errs := make([]error, len(ts))
	var wg sync.WaitGroup
	for i, t := range ts {
		wg.Go(func() {
			_, errs[i] = c.Workers().Complete(ctx, &gritv1.CompleteRequest{WorkerId: worker, TaskId: t.GetId(), LeaseToken: t.GetLeaseToken()})
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// workRemotely enqueues cfg.Tasks no-op tasks on a fresh store, serves its
// API, times cfg.RemoteWorkers workers working them all with mode, and
// checks that the store then holds them all SUCCESS.
func workRemotely(ctx context.Context, open Opener, cfg Config, mode reportMode) (float64, *remoteCount, error) {
	var perSec float64
	calls := &remoteCount{}
	err := withTarget(open, func(tg Target) (err error) {
		for done := 0; done < cfg.Tasks; done += cfg.Batch {
			if _, err := tg.Store.Enqueue(ctx, noops(min(cfg.Batch, cfg.Tasks-done), kindNoop)); err != nil {
				return err
			}
		}
		addr, stop, err := serveAPI(ctx, tg.Store)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, stop()) }()
		c, err := client.Dial(client.Config{Addr: addr}, grpc.WithChainUnaryInterceptor(calls.count))
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, c.Close(ctx)) }()
		begin := time.Now()
		if err := remoteWorkers(ctx, c, cfg, mode); err != nil {
			return err
		}
		perSec = float64(cfg.Tasks) / time.Since(begin).Seconds()
		return allSucceeded(ctx, tg.Store, cfg.Tasks)
	})
	return perSec, calls, err
}

// remoteWorkers runs cfg.RemoteWorkers workers until they have reported
// cfg.Tasks results between them; the first error ends them all.
func remoteWorkers(ctx context.Context, c *client.Client, cfg Config, mode reportMode) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var reported atomic.Int64
	all := make(chan struct{})
	var wg sync.WaitGroup
	for i := range cfg.RemoteWorkers {
		worker := fmt.Sprintf("bench-remote-%d", i+1)
		wg.Go(func() {
			for ctx.Err() == nil {
				resp, err := c.Workers().Claim(ctx, &gritv1.ClaimRequest{WorkerId: worker, Kinds: []string{kindNoop},
					Limit: int64(cfg.RemoteClaim), Wait: durationpb.New(100 * time.Millisecond)})
				if err == nil && len(resp.GetTasks()) > 0 {
					err = mode(ctx, c, worker, resp.GetTasks())
				}
				if err != nil {
					cancel(fmt.Errorf("worker %s: %w", worker, err))
					return
				}
				if n := reported.Add(int64(len(resp.GetTasks()))); n >= int64(cfg.Tasks) && n-int64(len(resp.GetTasks())) < int64(cfg.Tasks) {
					close(all) // this worker reported the last of them
				}
			}
		})
	}
	defer wg.Wait()
	defer cancel(nil) // the workers waiting on an empty queue stop
	select {
	case <-all:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(5 * time.Minute):
		return fmt.Errorf("%d of %d tasks reported: timed out", reported.Load(), cfg.Tasks)
	}
}

// allSucceeded checks that the store holds n tasks, every one SUCCESS.
func allSucceeded(ctx context.Context, st store.Store, n int) error {
	o, ok := st.(store.Overview)
	if !ok {
		return errors.New("the store cannot count tasks")
	}
	qs, err := o.QueueCounts(ctx)
	if err != nil {
		return fmt.Errorf("count the stored tasks: %w", err)
	}
	succeeded, all := 0, 0
	for _, q := range qs {
		all += q.N
		if q.State == task.Success {
			succeeded += q.N
		}
	}
	if succeeded != n || all != n {
		return fmt.Errorf("%d tasks worked, but the store holds %d, %d of them SUCCESS", n, all, succeeded)
	}
	return nil
}

// remoteCount counts the tasks the workers' claims got and the results
// their Report calls carried, per call.
type remoteCount struct{ claims, claimed, reports, results atomic.Int64 }

func (b *remoteCount) count(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	switch r := req.(type) {
	case *gritv1.ReportRequest:
		b.reports.Add(1)
		b.results.Add(int64(len(r.GetResults())))
	case *gritv1.ClaimRequest:
		if n := len(reply.(*gritv1.ClaimResponse).GetTasks()); err == nil && n > 0 {
			b.claims.Add(1)
			b.claimed.Add(int64(n))
		}
	}
	return err
}

// means are the tasks per claim that got any, and the results per Report.
func (b *remoteCount) means() (claim, report float64) {
	return float64(b.claimed.Load()) / float64(max(b.claims.Load(), 1)), float64(b.results.Load()) / float64(max(b.reports.Load(), 1))
}
