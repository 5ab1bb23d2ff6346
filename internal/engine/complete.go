package engine

import (
	"errors"
	"time"

	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// errAbandoned stands for the store's answer to a result that Stop gave
// up recording.
var errAbandoned = errors.New("engine: result abandoned at stop")

// maxFinishBatch bounds the attempts recorded in one transaction: a commit
// costs a disk flush whatever its size, so bigger batches go further.
const maxFinishBatch = 1000

// completer records finished attempts, batching whatever is queued into
// one store call. A result the store did not take while it took the
// others of its batch (it refused that one alone) is held apart, to be
// tried again on its own schedule, while the results after it are
// recorded (hold).
func (e *Engine) completer() {
	batch := make([]pending, 0, maxFinishBatch)
	var fs []store.Finish // reused while the store takes every batch at once
	for {
		var ok bool
		if batch, ok = e.nextBatch(batch[:0]); !ok {
			return
		}
		fs = e.commit(batch, fs[:0])
	}
}

// nextBatch fills batch with the held results that are due (every one,
// at Stop's last try), or else with what is queued, waiting for either.
// It reports false when nothing is left: the queue is closed and nothing
// is held.
func (e *Engine) nextBatch(batch []pending) ([]pending, bool) {
	for {
		if batch = e.takeHeld(batch); len(batch) > 0 {
			return batch, true
		}
		if e.rec.closed && len(e.rec.held) == 0 {
			return batch, false
		}
		var queue <-chan pending
		if !e.rec.closed {
			queue = e.finishes
		}
		var last, abandoned <-chan struct{}
		if len(e.rec.held) > 0 {
			last, abandoned = e.lastTry, e.completeCtx.Done()
		}
		due, stop := e.heldTimer()
		select {
		case p, ok := <-queue:
			if ok {
				stop()
				return e.fill(append(batch, p)), true
			}
			e.rec.closed = true
		case <-due:
		case <-last:
		case <-abandoned:
		}
		stop()
	}
}

// fill adds to batch what is queued, without waiting.
func (e *Engine) fill(batch []pending) []pending {
	for len(batch) < maxFinishBatch {
		select {
		case p, ok := <-e.finishes:
			if !ok {
				e.rec.closed = true
				return batch
			}
			batch = append(batch, p)
		default:
			return batch
		}
	}
	return batch
}

// commit records a batch, with fs as the store's items, and returns fs for
// the next batch when the store took this one at its first call (else nil:
// a call cut off by its deadline may still read them). The store's answer
// to each result is settled; a failure of the batch as a whole is retried
// (failedWhole).
func (e *Engine) commit(batch []pending, fs []store.Finish) []store.Finish {
	if fs == nil {
		fs = make([]store.Finish, 0, len(batch))
	}
	for i := range batch {
		e.withCatch(batch[i].a.t, &batch[i].f)
		fs = append(fs, batch[i].f)
	}
	for n := 1; ; n++ {
		ctx, cancel := e.storeCtx(e.completeCtx)
		errs, err := e.cfg.Store.Finish(ctx, fs)
		cancel()
		if err == nil {
			e.settle(batch, errs)
			if n > 1 {
				return nil
			}
			clear(fs) // the next batch's strings and events are its own
			return fs
		}
		if batch, fs = e.failedWhole(batch, fs, err, n); len(batch) == 0 {
			return nil
		}
	}
}

// failedWhole decides a batch the store failed as a whole with err, the
// n-th time in a row (it is down, full, read-only: every result alike,
// so the batch is not split): each result's policy is asked
// (commitFailed), and what they keep is tried again, together, after a
// capped backoff. At Stop's last try the batch is abandoned instead.
func (e *Engine) failedWhole(batch []pending, fs []store.Finish, err error, n int) ([]pending, []store.Finish) {
	if e.isLast() {
		e.abandonResults(batch, err, nil)
		return nil, nil
	}
	e.cfg.Logger.Warn("recording results failed; retrying", "err", err, "results", len(batch), "failures", n)
	delay := claimBackoff.Delay(n, 0, retry.DefaultRand)
	now := e.storeNow()
	kept := batch[:0:0]
	var gaveUp []pending
	for i := range batch {
		p := batch[i]
		p.fails++
		if e.commitFailed(&p, err, delay, now) == giveUp {
			gaveUp = append(gaveUp, p)
			continue
		}
		kept = append(kept, p)
	}
	if len(gaveUp) > 0 {
		e.forget(gaveUp, nil)
	}
	keptFs := make([]store.Finish, len(kept)) // fs may still be read by the call cut off
	for i := range kept {
		keptFs[i] = kept[i].f
	}
	if len(kept) > 0 {
		e.pause(delay)
	}
	return kept, keptFs
}

// settle takes the store's answer to each result of a batch it took: the
// results it recorded, or refused for a lost lease or as invalid, are
// done (recorded); those it did not record while it recorded the others
// (task.ErrRefused, or the store failed part way) are held (hold).
func (e *Engine) settle(batch []pending, errs []error) {
	left := 0
	for _, err := range errs {
		if unrecorded(err) {
			left++
		}
	}
	if left == 0 {
		e.recorded(batch, errs)
		return
	}
	done, doneErrs := make([]pending, 0, len(batch)-left), make([]error, 0, len(batch)-left)
	again, againErrs := make([]pending, 0, left), make([]error, 0, left)
	for i, err := range errs {
		if unrecorded(err) {
			again, againErrs = append(again, batch[i]), append(againErrs, err)
		} else {
			done, doneErrs = append(done, batch[i]), append(doneErrs, err)
		}
	}
	if len(done) > 0 {
		e.recorded(done, doneErrs)
	}
	e.hold(again, againErrs)
}

// unrecorded says whether the store's answer to one result is that it
// did not record it for now: not taken, not refused for good (a lease
// lost is fenced, an invalid result is a bug, both final).
func unrecorded(err error) bool {
	return err != nil && !errors.Is(err, task.ErrLeaseLost) && !errors.Is(err, task.ErrInvalid)
}

// recorded counts and reports what the store took. A result can have made
// work due (a retry, a dependent the store promoted): then the claim loop
// is woken. A plain success or failure makes nothing due, and waking the
// loop for it would only cost an empty claim.
func (e *Engine) recorded(batch []pending, errs []error) {
	due := false
	for i, p := range batch {
		due = due || p.f.State.Waiting() || p.a.t.RunID != 0 || len(p.f.Publish) > 0 || len(p.f.Enqueue) > 0
		if err := errs[i]; err != nil {
			switch {
			case errors.Is(err, task.ErrLeaseLost) && p.a.cancelled.Load():
				e.cfg.Logger.Info("the cancelled task's attempt ended", "task", p.a.t.ID)
			case errors.Is(err, task.ErrLeaseLost):
				e.stats.LeaseLost.Add(1)
				e.cfg.Metrics.Stale(&p.a.t)
				e.cfg.Logger.Warn("result rejected: the lease was lost", "task", p.a.t.ID, "token", p.f.Token)
			default:
				e.cfg.Logger.Error("result rejected", "task", p.a.t.ID, "err", err)
			}
			continue
		}
		e.stats.Finished.Add(1)
		if e.cfg.OnEvent != nil { // an event is two copies of a task: none when nobody listens
			e.emit(Event{Time: e.cfg.Clock.Now(), Task: applied(p.a.t, p.f), Attempt: p.f.Attempt})
		}
		e.machineEnded(&p.a.t, p.f.State)
	}
	e.forget(batch, errs)
	if due {
		e.Wake()
	}
}

// forget ends a batch's attempts: the gate learns how each ended (errs:
// the store's answer to each; nil when the batch was abandoned), and the
// heartbeat stops renewing their leases.
func (e *Engine) forget(batch []pending, errs []error) {
	ends := make([]gate.End, 0, len(batch))
	for i, p := range batch {
		end := gate.End{Task: &p.a.t, Finish: &batch[i].f, Err: errAbandoned}
		if errs != nil {
			end.Err = errs[i]
		}
		ends = append(ends, end)
	}
	ctx, cancel := e.storeCtx(e.completeCtx)
	e.gate.Ended(ctx, e.cfg.WorkerID, ends)
	cancel()
	e.mu.Lock()
	unheld := int64(0)
	for _, p := range batch {
		if cur, ok := e.running[p.a.t.ID]; ok && cur == p.a {
			delete(e.running, p.a.t.ID)
		}
		if p.held {
			unheld++
		}
	}
	e.mu.Unlock()
	if unheld > 0 {
		e.unhold(unheld)
	}
}

// applied is the task as a Finish leaves it.
func applied(t task.Task, f store.Finish) task.Task {
	t.State, t.NextAt = f.State, f.NextAt
	t.LastError, t.Fingerprint, t.Streak, t.PrevDelay = f.Error, f.Fingerprint, f.Streak, f.PrevDelay
	if f.Refund {
		t.Attempt--
	}
	if f.Deferred {
		t.Deferrals++
	}
	t.LeaseOwner, t.LeaseExpires = "", time.Time{}
	return t
}

// pause waits d, or until Stop makes its last try or gives up.
func (e *Engine) pause(d time.Duration) {
	t := e.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
	case <-e.lastTry:
	case <-e.completeCtx.Done():
	}
}

func (e *Engine) emit(ev Event) {
	if e.cfg.OnEvent != nil {
		e.events <- ev
	}
}

func (e *Engine) eventLoop() {
	for ev := range e.events {
		e.cfg.OnEvent(ev)
	}
}
