package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/grit-run/grit/internal/tracing"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// inflight is an attempt in flight: a claimed task being worked. (The
// attempt's record is a task.Attempt; what its handler learns of it, a
// HandlerAttempt; the input to a retry decision, a retry.Attempt.)
type inflight struct {
	t      task.Task
	cancel context.CancelCauseFunc
	back   bool // given back at a budget or limit, or failed fast, never run
	// cancelled is set when the store announced the task's cancel: its
	// result's refusal is expected.
	cancelled atomic.Bool

	span     trace.Span  // the attempt's span, when traced; ended by end
	watched  *watched    // set before its handler runs, then only read
	ended    atomic.Bool // by its handler's return or by the watchdog, whichever comes first
	doneSeen time.Time   // when the watchdog first saw its context ended; guarded by Engine.watch

	// What a run needs besides lives in the attempt's own allocation: on a
	// busy worker, allocations per attempt are most of the garbage
	// collector's work.
	view  task.Task    // the handler's copy of t: what it changes is not the engine's
	rec   record       // what the handler leaves on the attempt
	w     watched      // what watched points to
	actx  attemptCtx   // the handler's context, below its deadline
	steps stepLog      // its handler's durable steps
	quar  quarLog      // the items its handler set aside
	fin   store.Finish // its result as end decides it, before it is sent to the completer
}

// attemptCtx carries an attempt's information (AttemptFrom) and its record
// to the handler.
type attemptCtx struct {
	context.Context
	info HandlerAttempt
	rec  *record
	e    *Engine // for confirmLease
	a    *inflight
}

func (c *attemptCtx) Value(key any) any {
	switch key.(type) {
	case attemptKey:
		return &c.info
	case recordKey:
		return c.rec
	case confirmKey, stepKey:
		return c
	}
	return c.Context.Value(key)
}

// outcome is how an attempt's handler ended.
type outcome struct {
	err     error
	cause   error // why the attempt's context ended, if it did
	stuck   bool  // the handler ignored the end of its context
	timeout time.Duration
	// timeoutSource says where timeout came from ("task", "handler", or
	// how an auto timeout was chosen).
	timeoutSource string
	started       time.Time
	ended         time.Time
	rec           *record // nil when the handler is stuck: what it left is not read
}

// record is what a handler leaves on its attempt's record besides its
// error: a process's exit status and output, success or not.
type record struct {
	output   string
	exitCode *int
	signal   string
	mu       sync.Mutex   // guards events: a handler may publish from many goroutines
	events   []task.Event // published when the attempt succeeds
	tenant   string       // the task's: its events are the tenant's
}

type recordKey struct{}

// pending is a finished attempt waiting to be recorded.
type pending struct {
	a     *inflight
	f     store.Finish
	fails int  // recordings of it that failed in a row
	held  bool // it was held apart (hold), and counts in Engine.held
}

// execute runs an attempt on its own goroutine and hands its result to the
// completer, unless the watchdog has ended the attempt as stuck first.
func (e *Engine) execute(ctx context.Context, a *inflight, h *Handler) {
	if e.notStarted(a) {
		return
	}
	if o, ok := e.callHandler(ctx, a, h); ok {
		e.end(a, o)
	}
}

// notStarted gives a's task back unstarted, and reports true, when its
// queue, kind or tenant was paused since it was claimed: once a pause
// returns, no attempt of it starts (gate.PausedBack).
func (e *Engine) notStarted(a *inflight) bool {
	f, paused := e.gate.PausedBack(a.t, e.cfg.WorkerID, e.cfg.Clock.Now())
	if !paused {
		return false
	}
	defer e.execs.Done()
	a.cancel(nil)
	a.back = true
	e.stats.PauseDeferred.Add(1)
	e.finishes <- pending{a: a, f: f}
	<-e.slots
	e.cfg.Metrics.Slots(-1, 1)
	if e.slotBound.Load() {
		e.Wake()
	}
	return true
}

// end hands an attempt's result to the completer and frees its slot.
func (e *Engine) end(a *inflight, o outcome) {
	defer e.execs.Done()
	a.cancel(nil)
	f := &a.fin // in the attempt's allocation: a Finish of its own would be one more per attempt
	*f = e.finishFor(a.t, o)
	e.gate.Ending(e.runCtx, &a.t, f)
	tracing.End(a.span, f) // as decided, the gate's say included
	e.finishes <- pending{a: a, f: *f}
	<-e.slots
	e.cfg.Metrics.Slots(-1, 1)
	if e.slotBound.Load() {
		e.Wake() // the claim loop is waiting for a slot
	}
}

// run calls the handler under the attempt's deadline, on the calling
// goroutine: one goroutine per attempt, not two. A handler that does not
// return within its grace after its context ends is abandoned as stuck by
// the watchdog, which ends the attempt in its place; run then returns
// false when the handler does return, for its result is no longer wanted.
func (e *Engine) callHandler(ctx context.Context, a *inflight, h *Handler) (outcome, bool) {
	t := &a.view
	*t = a.t
	timeout, source := e.timeoutFor(t, h)
	if t.Timeout == task.AutoTimeout {
		t.Timeout = timeout // the handler sees the bound it runs under, not the sentinel
	}
	if e.cfg.Tracer != nil {
		ctx, a.span = e.cfg.Tracer.Attempt(ctx, &a.t)
	}
	rec := &a.rec
	rec.tenant = a.t.Tenant
	a.quar.pol = h.Quarantine
	a.actx = attemptCtx{Context: ctx, rec: rec, e: e, a: a,
		info: HandlerAttempt{TaskID: t.ID, Number: t.Attempt, LeaseToken: t.LeaseToken, Worker: e.cfg.WorkerID,
			Timeout: timeout, TimeoutSource: source, Snoozes: t.Snoozes}}
	ctx = &a.actx
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, errTimedOut)
		defer cancel()
	}
	o := outcome{started: e.storeNow(), timeout: timeout, timeoutSource: source}
	a.w = watched{ctx: ctx, began: o, grace: e.graceFor(h, t)}
	a.watched = &a.w
	e.watch.Lock()
	e.watch.running[a] = struct{}{}
	e.watch.Unlock()
	var err error
	if e.cancels.has(t.ID) {
		a.cancelled.Store(true)
		a.cancel(errCancelled{}) // cancelled since its claim: not started
		err = context.Cause(ctx)
	} else if h.Isolate {
		err = e.children.run(ctx, a, t)
	} else {
		err = call(ctx, h, t)
	}
	err = e.quarantineVerdict(a, err)
	if !a.ended.CompareAndSwap(false, true) {
		return outcome{}, false // the watchdog ended it as stuck
	}
	e.watch.Lock()
	delete(e.watch.running, a)
	e.watch.Unlock()
	o.err = err
	o.ended = e.storeNow()
	o.rec = rec
	if ctx.Err() != nil {
		o.cause = context.Cause(ctx)
	}
	return o, true
}

// watched is what the watchdog needs of an attempt whose handler runs.
type watched struct {
	ctx   context.Context
	began outcome
	grace time.Duration
}

// watchdog ends, as stuck, the attempts whose handler has not returned
// within its grace after its context ended: their slots are freed and
// their goroutines left to end when they will. It looks every quarter of
// the shortest grace (at most every second), so a stuck attempt ends
// within its grace and two of those looks. It keeps its own set of the
// handlers that run, apart from Engine.running, which holds one attempt
// per task: a task claimed again while an old attempt's handler still
// runs must not hide that attempt from it.
func (e *Engine) watchdog() {
	tick := e.cfg.Clock.NewTicker(min(max(e.cfg.StuckGrace/4, 10*time.Millisecond), time.Second))
	defer tick.Stop()
	var stuck []*inflight
	for {
		select {
		case <-tick.C():
		case <-e.runCtx.Done():
			return
		}
		now := e.cfg.Clock.Now()
		e.retireIdle(now.Add(-executorIdle))
		stuck = stuck[:0]
		e.watch.Lock()
		for a := range e.watch.running {
			if a.watched.ctx.Err() == nil {
				continue
			}
			if a.doneSeen.IsZero() {
				a.doneSeen = now
			} else if now.Sub(a.doneSeen) >= a.watched.grace {
				stuck = append(stuck, a)
				delete(e.watch.running, a)
			}
		}
		e.watch.Unlock()
		for _, a := range stuck {
			if a.ended.CompareAndSwap(false, true) {
				e.abandonStuck(a)
			}
		}
	}
}

// abandonStuck ends an attempt whose handler ignored the end of its
// context for its grace; what the handler left is not read.
func (e *Engine) abandonStuck(a *inflight) {
	w := a.watched
	e.stats.Stuck.Add(1)
	e.cfg.Metrics.Stuck(&a.t)
	e.cfg.Logger.Error("handler ignored the end of its context; its slot is freed", "task", a.t.ID, "kind", a.t.Kind)
	o := w.began
	o.stuck = true
	o.ended = e.storeNow()
	o.cause = context.Cause(w.ctx)
	e.end(a, o)
}

// graceFor is how long after its context ends a handler may still return.
// A process task, and an isolated handler's process, gets its own
// SIGTERM grace on top.
func (e *Engine) graceFor(h *Handler, t *task.Task) time.Duration {
	if t.Kind != task.KindExec && !h.Isolate {
		return e.cfg.StuckGrace
	}
	return childGrace(t) + e.cfg.StuckGrace
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
	// Source is how an auto timeout was chosen ("auto: 5 × p99 2m of 140
	// runs"); "" for a fixed one.
	Source string
	Stuck  bool  // the handler did not return even then
	Err    error // what the handler returned, if it did
}

func (e *TimeoutError) Error() string {
	s := fmt.Sprintf("timed out after %s", retry.FormatDuration(e.After))
	if e.Source != "" {
		s += " (" + e.Source + ")"
	}
	if e.Stuck {
		s += " and ignored cancellation (stuck)"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *TimeoutError) Unwrap() error { return e.Err }
