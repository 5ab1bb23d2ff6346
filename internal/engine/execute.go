package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/grit-run/grit/internal/proc"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// attempt is a claimed task being worked.
type attempt struct {
	t      task.Task
	cancel context.CancelCauseFunc
	probe  bool // a probe of its group's half-open breaker
	back   bool // given back at a budget or limit, never run
}

// outcome is how an attempt's handler ended.
type outcome struct {
	err     error
	cause   error // why the attempt's context ended, if it did
	stuck   bool  // the handler ignored the end of its context
	timeout time.Duration
	started time.Time
	ended   time.Time
	rec     *record // nil when the handler is stuck: what it left is not read
}

// record is what a handler leaves on its attempt's record besides its
// error: a process's exit status and output, success or not.
type record struct {
	output   string
	exitCode *int
	signal   string
	mu       sync.Mutex    // guards events: a handler may publish from many goroutines
	events   []store.Event // published when the attempt succeeds
	tenant   string        // the task's: its events are the tenant's
	noEvents bool          // the store is not a store.Publisher: Publish fails
}

type recordKey struct{}

// pending is a finished attempt waiting to be recorded.
type pending struct {
	a *attempt
	f store.Finish
}

func (e *Engine) execute(ctx context.Context, a *attempt, h *Handler) {
	defer e.execs.Done()
	o := e.run(ctx, a, h)
	a.cancel(nil)
	f := e.finishFor(a.t, o)
	e.finishes <- pending{a: a, f: f}
	<-e.slots
	if e.slotBound.Load() {
		e.Wake() // the claim loop is waiting for a slot
	}
}

// run calls the handler under the attempt's deadline. A handler that does
// not return within its grace after the context ends is abandoned as stuck:
// its slot is freed, its goroutine is left to end when it will.
func (e *Engine) run(ctx context.Context, a *attempt, h *Handler) outcome {
	t := a.t
	timeout := t.Timeout
	if timeout == 0 {
		timeout = h.Timeout
	}
	ctx = withAttempt(ctx, AttemptInfo{TaskID: t.ID, Number: t.Attempt, LeaseToken: t.LeaseToken, Worker: e.cfg.WorkerID})
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, errTimedOut)
		defer cancel()
	}
	o := outcome{started: e.storeNow(), timeout: timeout}
	rec := &record{tenant: a.t.Tenant, noEvents: !e.publishes}
	ctx = context.WithValue(ctx, recordKey{}, rec)
	done := make(chan error, 1)
	if err := e.breakerRefuses(t); err != nil {
		done <- err
	} else {
		go func() { done <- call(ctx, h, &t) }()
	}
	select {
	case o.err = <-done:
	case <-ctx.Done():
		select {
		case o.err = <-done:
		case <-time.After(e.graceFor(t)):
			o.stuck = true
			e.stats.Stuck.Add(1)
			e.cfg.Logger.Error("handler ignored the end of its context; its slot is freed", "task", t.ID, "kind", t.Kind)
		}
	}
	o.ended = e.storeNow()
	if !o.stuck {
		o.rec = rec
	}
	if ctx.Err() != nil {
		o.cause = context.Cause(ctx)
	}
	return o
}

// graceFor is how long after its context ends a handler may still return.
// A process task gets its own SIGTERM grace on top.
func (e *Engine) graceFor(t task.Task) time.Duration {
	if t.Kind != task.KindExec {
		return e.cfg.StuckGrace
	}
	g := t.Grace
	if g <= 0 {
		g = proc.DefaultGrace
	}
	return g + e.cfg.StuckGrace
}

// call runs the handler, turning a panic into a failed attempt.
func call(ctx context.Context, h *Handler, t *task.Task) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = retry.Recovered(v)
		}
	}()
	return h.Fn(ctx, t)
}

// TimeoutError is an attempt cut off by the executor.
type TimeoutError struct {
	After time.Duration
	Stuck bool  // the handler did not return even then
	Err   error // what the handler returned, if it did
}

func (e *TimeoutError) Error() string {
	s := fmt.Sprintf("timed out after %s", retry.FormatDuration(e.After))
	if e.Stuck {
		s += " and ignored cancellation (stuck)"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *TimeoutError) Unwrap() error { return e.Err }
