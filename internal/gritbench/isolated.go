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

// IsolatedKind is the isolated workload's kind, whose handler its
// children register too (RegisterIsolated): a no-op.
const IsolatedKind = "noop-isolated"

// RegisterIsolated registers the isolated workload's handlers on e,
// isolated: on the benchmark's engine, which runs them in children, and
// on each child's (engine.NewChild), which runs them.
func RegisterIsolated(e *engine.Engine) error { return registerNoops(e, true) }

func registerNoops(e *engine.Engine, isolate bool) error {
	return e.Register(engine.Handler{Kind: IsolatedKind, Fn: func(context.Context, *task.Task) error { return nil }, Isolate: isolate})
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

// timeNoops starts an engine with the workload's handler, isolated or
// not, at IsolatedSlots, isolated with a warm child for each slot
// (Isolation.Warm; children, how many were started); works a round of a
// task a slot; then times Isolated no-op tasks from their enqueue until
// the last has succeeded.
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
		if isolated {
			ec.Isolation.Warm = cfg.IsolatedSlots // every slot has a ready child when Start returns
		}
		e, err := engine.Assemble(ec, engine.Observe{})
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
		// A round of each slot's worth warms the engine and the store
		// alike, both ways.
		if err := round(IsolatedKind, cfg.IsolatedSlots); err != nil {
			return fmt.Errorf("warm up: %w", err)
		}
		children = int(e.Stats().ChildStarts.Load())
		begin := time.Now()
		if err := round(IsolatedKind, cfg.Isolated); err != nil {
			return err
		}
		took = time.Since(begin)
		return nil
	})
	return took, children, err
}
