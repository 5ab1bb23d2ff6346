package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/grit-run/grit/retry"
)

// completion is the completer's own state (only its goroutine touches it,
// and Stop once it has ended).
type completion struct {
	held      []heldResult // results to try again, each when due
	closed    bool         // the queue is closed: Stop drained the attempts
	abandoned []int64      // the tasks whose results Stop gave up
}

// heldResult is a result the store did not take while it took the others
// of its batch, waiting for its next try.
type heldResult struct {
	p   pending
	due time.Time // on the engine's clock
}

// hold decides each result of ps the store did not record while it
// recorded the others of their batch (it refused it alone, task.ErrRefused,
// or failed part way), with errs[i] the store's answer to ps[i]: its own
// error goes to its own policy's hook (commitFailed), never another's. A
// result kept is held apart and tried again after a capped backoff of its
// own failures (results refused together, alike, are tried together
// again), while the results after it are recorded at once; a task the
// hook fails has its failure recorded at once. At Stop's last try they
// are abandoned instead.
func (e *Engine) hold(ps []pending, errs []error) {
	if e.isLast() {
		e.abandonResults(ps, nil, errs)
		return
	}
	now, local := e.storeNow(), e.cfg.Clock.Now()
	delays := map[int]time.Duration{} // by failures in a row: one draw of jitter each
	var gaveUp []pending
	for i := range ps {
		p := ps[i]
		p.fails++
		if !p.held {
			p.held = true
			e.held.Add(1)
		}
		d, ok := delays[p.fails]
		if !ok {
			d = claimBackoff.Delay(p.fails, 0, retry.DefaultRand)
			delays[p.fails] = d
		}
		level := e.cfg.Logger.Debug
		if p.fails == 1 || p.fails%10 == 0 { // said at once, then now and then while it lasts
			level = e.cfg.Logger.Warn
		}
		level("the store did not record a result, and recorded the others of its batch; trying it again apart",
			"task", p.a.t.ID, "kind", p.a.t.Kind, "err", errs[i], "failures", p.fails, "retry_in", d)
		switch e.commitFailed(&p, errs[i], d, now) {
		case giveUp:
			gaveUp = append(gaveUp, p)
		case failTask:
			e.rec.held = append(e.rec.held, heldResult{p: p, due: local})
		default:
			e.rec.held = append(e.rec.held, heldResult{p: p, due: local.Add(d)})
		}
	}
	if len(gaveUp) > 0 {
		e.forget(gaveUp, nil)
	}
}

// unhold counts n held results out: recorded, or given up. A claim loop
// held back by them may claim again (freeSlots).
func (e *Engine) unhold(n int64) {
	e.held.Add(-n)
	if e.slotBound.Load() {
		e.Wake()
	}
}

// freeSlots is how many attempts the claim loop may start: the slots no
// attempt runs in, less the results held apart past Concurrency. Held
// results take no slot, so that the work after them goes on; but a worker
// whose store refuses many results stops claiming once it holds twice
// its concurrency unrecorded, rather than hold ever more.
func (e *Engine) freeSlots() int {
	free := cap(e.slots) - len(e.slots)
	if over := int(e.held.Load()) - cap(e.slots); over > 0 {
		free = max(free-over, 0)
	}
	return free
}

// takeHeld moves to batch the held results that are due, every one at
// Stop's last try, up to a batch.
func (e *Engine) takeHeld(batch []pending) []pending {
	if len(e.rec.held) == 0 {
		return batch
	}
	last, now := e.isLast() || e.completeCtx.Err() != nil, e.cfg.Clock.Now()
	kept := e.rec.held[:0]
	for _, h := range e.rec.held {
		if len(batch) < maxFinishBatch && (last || !h.due.After(now)) {
			batch = append(batch, h.p)
		} else {
			kept = append(kept, h)
		}
	}
	clear(e.rec.held[len(kept):])
	e.rec.held = kept
	return batch
}

// heldTimer fires when the first held result is due (never when none is
// held); stop releases it.
func (e *Engine) heldTimer() (<-chan time.Time, func()) {
	if len(e.rec.held) == 0 {
		return nil, func() {}
	}
	first := e.rec.held[0].due
	for _, h := range e.rec.held[1:] {
		if h.due.Before(first) {
			first = h.due
		}
	}
	t := e.cfg.Clock.NewTimer(max(first.Sub(e.cfg.Clock.Now()), 0))
	return t.C(), func() { t.Stop() }
}

// abandonResults gives up results at Stop's last try, with the store's
// error err (the same for all) or errs[i] for ps[i]: they are not
// recorded, their leases lapse (a late write is fenced off), and the
// rescue's interrupted rule decides, as for a worker that died. Stop
// reports the tasks.
func (e *Engine) abandonResults(ps []pending, err error, errs []error) {
	ids := make([]int64, len(ps))
	for i, p := range ps {
		ids[i] = p.a.t.ID
		if errs != nil {
			e.cfg.Logger.Warn("result not recorded at stop", "task", p.a.t.ID, "err", errs[i])
		}
	}
	args := []any{"count", len(ids), "tasks", ids}
	if err != nil {
		args = append(args, "err", err)
	}
	e.cfg.Logger.Error("results abandoned at stop: the store did not record them before the stop's deadline; their leases will lapse", args...)
	e.rec.abandoned = append(e.rec.abandoned, ids...)
	e.forget(ps, nil)
}

// isLast says whether Stop makes its last try: its context ended (or
// Config.RecordTimeout passed after its drain), so a result the store
// does not take at once is abandoned rather than tried again.
func (e *Engine) isLast() bool {
	select {
	case <-e.lastTry:
		return true
	default:
		return false
	}
}

// errRecordTimeout is why Stop gave results up when its context had not
// ended.
var errRecordTimeout = errors.New("engine: stop: recording the last results took longer than Config.RecordTimeout")

// abandonedError is Stop's error when it gave results up: how many, which
// tasks (the first ten), and why (cause).
func abandonedError(ids []int64, cause error) error {
	shown := ids[:min(len(ids), 10)]
	more := ""
	if len(ids) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(ids)-len(shown))
	}
	what := "results"
	if len(ids) == 1 {
		what = "result"
	}
	return fmt.Errorf("engine: stop: %d %s not recorded, abandoned (tasks %v%s; their leases lapse and the rescue decides): %w",
		len(ids), what, shown, more, cause)
}
