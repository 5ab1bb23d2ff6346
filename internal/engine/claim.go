package engine

import (
	"context"
	"time"

	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// claimBackoff spaces claims after store errors: conflicts are retried at
// once, a database that is down is retried forever, at most every 5s, with
// jitter so that a fleet does not reconnect in step.
var claimBackoff = retry.Exponential{Min: 10 * time.Millisecond, Max: 5 * time.Second}

// minWait keeps the claim loop from spinning when a task is due but was
// taken by another worker between NextDue and Claim.
const minWait = time.Millisecond

// batchWindow is how long, while a backlog waits, the claim loop lets freed
// slots gather into one claim: claims of a few tasks each would cost a
// database round trip and a commit apiece.
const batchWindow = 2 * time.Millisecond

func (e *Engine) claimLoop() {
	fails := 0
	backlog := false // the last claim took all it asked for: more is due
	for !e.isStopping() {
		free := e.freeSlots()
		if backlog && free < e.claimFloor() {
			e.slotBound.Store(true)
			free = e.gatherSlots()
		}
		if free > 0 {
			more, err := e.claim(free)
			if err != nil {
				fails++
				e.pollFailed(err, fails)
				e.sleep(claimBackoff.Delay(fails, 0, retry.DefaultRand))
				continue
			}
			if fails > 0 {
				e.cfg.Logger.Info("claiming again", "after_failures", fails)
				fails = 0
				e.stats.PollErrors.Store(0)
				e.reportPoll(0)
			}
			if backlog = more; backlog {
				continue // there may be more due now
			}
		}
		e.slotBound.Store(free == 0)
		if free == 0 && e.freeSlots() > 0 {
			continue // freed before slotBound was set: its executor did not wake us
		}
		e.waitForWork(free > 0)
	}
}

// claimFloor is the claim size worth waiting batchWindow for.
func (e *Engine) claimFloor() int { return min(cap(e.slots)/4, 100) }

// gatherSlots waits until claimFloor slots are free or batchWindow has
// passed, and returns how many are free.
func (e *Engine) gatherSlots() int {
	t := e.cfg.Clock.NewTimer(batchWindow)
	defer t.Stop()
	for {
		free := e.freeSlots()
		if free >= e.claimFloor() {
			return free
		}
		select {
		case <-e.wake:
		case <-t.C():
			return e.freeSlots()
		case <-e.stopping:
			return 0
		}
	}
}

// claim claims up to limit tasks through the gate, launches those to run
// and hands those it gave back or failed to the completer. It reports
// whether the claim took all it asked for: more may be due.
func (e *Engine) claim(limit int) (bool, error) {
	ctx, cancel := e.storeCtx(e.runCtx)
	defer cancel()
	c, err := e.gate.Claim(ctx, e.request(limit))
	for _, b := range c.Back {
		e.giveBack(b)
	}
	for _, t := range c.Tasks {
		e.launch(t)
	}
	e.stats.Claims.Add(1)
	e.stats.Claimed.Add(int64(len(c.Tasks) + len(c.Back)))
	return c.More, err
}

// giveBack hands a claimed task the gate did not let run (given back at a
// budget or limit, or failed fast) to the completer.
func (e *Engine) giveBack(b gate.Back) {
	if b.Finish.Attempt.Outcome == task.OutcomeReleased {
		e.stats.BudgetDeferred.Add(1)
	}
	e.finishes <- pending{a: &inflight{t: b.Task, cancel: func(error) {}, back: true}, f: b.Finish}
}

func (e *Engine) pollFailed(err error, fails int) {
	e.stats.PollErrors.Store(int64(fails))
	e.stats.lastErr.Store(err.Error())
	e.reportPoll(fails)
	level := e.cfg.Logger.Warn
	if fails > 1 {
		level = e.cfg.Logger.Debug
	}
	level("claim failed; retrying", "err", err, "failures", fails)
}

// reportPoll records the last claim error and the failures in a row on the
// worker, when the store can (a store that is down cannot: the report is
// made again when claims succeed).
func (e *Engine) reportPoll(fails int) {
	r, ok := e.cfg.Store.(store.PollReporter)
	if !ok {
		return
	}
	msg, _ := e.stats.LastPollError()
	ctx, cancel := context.WithTimeout(e.runCtx, 500*time.Millisecond)
	defer cancel()
	if err := r.ReportPoll(ctx, e.cfg.WorkerID, msg, fails); err != nil {
		e.cfg.Logger.Debug("could not record the claim error on the worker", "err", err)
	}
}

// waitForWork sleeps until the next task is due, something wakes the loop
// (an enqueue in this process, a freed slot, a retry scheduled) or the poll
// interval passes, whichever comes first.
func (e *Engine) waitForWork(canClaim bool) {
	d := e.cfg.Poll
	if p, ok := e.gate.UntilProbe(); ok && canClaim {
		d = min(d, max(p, minWait))
	}
	if req, ok := e.gate.Skips(e.request(0)); canClaim && ok {
		req.DueBefore = e.storeNow().Add(d) // later ones wait for the next poll
		ctx, cancel := e.storeCtx(e.runCtx)
		next, ok, err := e.cfg.Store.NextDue(ctx, req)
		cancel()
		if err == nil && ok {
			d = min(d, max(e.untilStore(next), minWait))
		}
	}
	t := e.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-e.wake:
	case <-t.C():
	case <-e.stopping:
	}
}

// storeCtx bounds a store call of the claim loop, the completer or the
// rescue by a lease: a database that keeps a connection open but never
// answers must not stall the worker; the call fails and is retried (on
// another connection) as any failed call is. A call that takes a lease
// is useless anyway: the leases it deals in would have expired. The
// heartbeat has a tighter deadline of its own.
func (e *Engine) storeCtx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, e.cfg.Lease)
}

func (e *Engine) sleep(d time.Duration) {
	t := e.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
	case <-e.stopping:
	}
}

// launch starts an executor for a claimed task; the caller has checked that
// a slot is free.
func (e *Engine) launch(t task.Task) {
	e.slots <- struct{}{}
	e.cfg.Metrics.Slots(1, -1)
	ctx, cancel := context.WithCancelCause(e.runCtx)
	a := &inflight{t: t, cancel: cancel}
	e.mu.Lock()
	e.running[t.ID] = a
	e.mu.Unlock()
	if e.cfg.OnEvent != nil { // an event copies the task: none when nobody listens
		e.emit(Event{Time: e.cfg.Clock.Now(), Task: t})
	}
	e.execs.Add(1)
	e.dispatch(job{ctx: ctx, a: a, h: e.handlers[t.Kind]})
}

// request is what the claim loop asks the gate for: the worker's queues,
// kinds and run, with its concurrency.
func (e *Engine) request(limit int) gate.Request {
	return gate.Request{Capacity: e.cfg.Concurrency, ClaimRequest: store.ClaimRequest{
		Worker: e.cfg.WorkerID, Queues: e.cfg.Queues, Kinds: e.kinds, Run: e.cfg.Run, Limit: limit, Lease: e.cfg.Lease,
	}}
}
