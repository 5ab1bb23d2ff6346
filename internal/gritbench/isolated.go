package gritbench

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// The isolated workload's kinds, whose handlers its children register
// too (RegisterIsolated): the no-op tasks it times, and the tasks that
// warm its slots first, each holding its child a while so that every
// slot starts one.
const (
	IsolatedKind = "noop-isolated"
	warmKind     = "noop-isolated-warm"
	warmHold     = 200 * time.Millisecond
)

// RegisterIsolated registers the isolated workload's handlers on e,
// isolated: on the benchmark's engine, which runs them in children, and
// on each child's (engine.NewChild), which runs them.
func RegisterIsolated(e *engine.Engine) error { return registerNoops(e, true) }

func registerNoops(e *engine.Engine, isolate bool) error {
	hold := func(ctx context.Context, _ *task.Task) error {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(warmHold):
			return nil
		}
	}
	for _, h := range []engine.Handler{
		{Kind: IsolatedKind, Fn: func(context.Context, *task.Task) error { return nil }},
		{Kind: warmKind, Fn: hold},
	} {
		h.Isolate = isolate
		if err := e.Register(h); err != nil {
			return err
		}
	}
	return nil
}

// IsolatedWork is what an isolated no-op attempt costs against an
// in-process one: the throughput of each at the same concurrency, and the
// difference of their times per attempt.
type IsolatedWork struct {
	IsolatedTasks        int     `json:"isolated_tasks,omitempty"`
	IsolatedPerSec       float64 `json:"isolated_per_sec,omitempty"`
	IsolatedInProcPerSec float64 `json:"isolated_inprocess_per_sec,omitempty"`
	// IsolatedAddedUS is how much longer, in µs, an isolated attempt
	// takes than an in-process one (1/rate each).
	IsolatedAddedUS float64 `json:"isolated_added_us,omitempty"`
	// IsolatedChildren is how many children were warm when the timing
	// began.
	IsolatedChildren int `json:"isolated_children,omitempty"`
}

// isolatedWork works Isolated no-op tasks in children (Child), and as many
// in this process, each on a fresh store by an engine whose slots (and
// children) are warm.
func isolatedWork(ctx context.Context, open Opener, cfg Config, r *Result) error {
	if len(cfg.Child) == 0 {
		return errors.New("no command to start the children")
	}
	in, _, err := timeNoops(ctx, open, cfg, false)
	if err != nil {
		return fmt.Errorf("in process: %w", err)
	}
	iso, children, err := timeNoops(ctx, open, cfg, true)
	if err != nil {
		return fmt.Errorf("isolated: %w", err)
	}
	r.IsolatedTasks, r.IsolatedChildren = cfg.Isolated, children
	r.IsolatedInProcPerSec = float64(cfg.Isolated) / in.Seconds()
	r.IsolatedPerSec = float64(cfg.Isolated) / iso.Seconds()
	r.IsolatedAddedUS = float64(iso-in) / float64(time.Microsecond) / float64(cfg.Isolated)
	return nil
}

// timeNoops starts an engine with the workload's handlers, isolated or
// not, at IsolatedSlots; warms its slots with a task each
// that holds its child a while, so that every slot has started one
// (children, how many); then times Isolated no-op tasks from their
// enqueue until the last has succeeded.
func timeNoops(ctx context.Context, open Opener, cfg Config, isolated bool) (took time.Duration, children int, err error) {
	err = withStore(open, func(st store.Store) error {
		var finished atomic.Int64
		var goal atomic.Int64
		reached := make(chan struct{}, 1)
		ec := cfg.engineConfig(st, cfg.IsolatedSlots, func(ev engine.Event) {
			if ev.Task.State == task.Success && finished.Add(1) == goal.Load() {
				reached <- struct{}{}
			}
		})
		ec.Isolation.Command = cfg.Child
		e, err := engine.New(ec)
		if err != nil {
			return err
		}
		if err := registerNoops(e, isolated); err != nil {
			return err
		}
		if err := e.Start(ctx); err != nil {
			return err
		}
		defer e.Stop(context.WithoutCancel(ctx))
		round := func(kind string, n int) error {
			goal.Add(int64(n))
			for done := 0; done < n; done += cfg.Batch {
				if _, err := st.Enqueue(ctx, noops(min(cfg.Batch, n-done), kind)); err != nil {
					return err
				}
				e.Wake()
			}
			if err := wait(ctx, reached, 5*time.Minute); err != nil {
				return fmt.Errorf("%d of %d tasks done: %w", finished.Load(), goal.Load(), err)
			}
			return nil
		}
		// The claims of a round may be spread out, and its children
		// reused: rounds go on until every slot has its child, or one
		// starts none.
		for range 10 {
			started := e.Stats().ChildStarts.Load()
			if err := round(warmKind, cfg.IsolatedSlots); err != nil {
				return fmt.Errorf("warm up: %w", err)
			}
			children = int(e.Stats().ChildStarts.Load())
			if !isolated || children >= cfg.IsolatedSlots || int64(children) == started {
				break
			}
		}
		begin := time.Now()
		if err := round(IsolatedKind, cfg.Isolated); err != nil {
			return err
		}
		took = time.Since(begin)
		return nil
	})
	return took, children, err
}
