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
// one store transaction.
func (e *Engine) completer() {
	batch := make([]pending, 0, maxFinishBatch)
	var fs []store.Finish // reused while the store takes every batch
	for p := range e.finishes {
		batch = append(batch[:0], p)
	fill:
		for len(batch) < maxFinishBatch {
			select {
			case p, ok := <-e.finishes:
				if !ok {
					break fill
				}
				batch = append(batch, p)
			default:
				break fill
			}
		}
		fs = e.commit(batch, fs[:0])
	}
}

// commit records a batch, retrying the store forever with a capped backoff
// until Stop gives up on it, with fs as the store's items. It returns fs
// for the next batch once the store has taken this one; a store whose call
// ended with its context may still be reading them, so then it returns nil.
func (e *Engine) commit(batch []pending, fs []store.Finish) []store.Finish {
	if fs == nil {
		fs = make([]store.Finish, 0, len(batch))
	}
	for i := range batch {
		e.withCatch(batch[i].a.t, &batch[i].f)
		fs = append(fs, batch[i].f)
	}
	var errs []error
	cut := false // a call ended by its deadline: the store may still read fs
	for n := 1; ; n++ {
		ctx, cancel := e.storeCtx(e.completeCtx)
		var err error
		errs, err = e.cfg.Store.Finish(ctx, fs)
		cut = cut || (err != nil && ctx.Err() != nil)
		cancel()
		if err == nil {
			break
		}
		if e.completeCtx.Err() != nil {
			e.cfg.Logger.Error("results abandoned: the store did not take them before the stop deadline", "attempts", len(fs), "err", err)
			e.forget(batch, nil)
			return nil
		}
		e.cfg.Logger.Warn("recording results failed; retrying", "err", err, "failures", n)
		delay := claimBackoff.Delay(n, 0, retry.DefaultRand)
		kept, keptFs, gaveUp := e.onCommitError(batch, fs, err, n, delay)
		if len(gaveUp) > 0 {
			e.forget(gaveUp, nil)
		}
		if len(keptFs) != len(fs) || (len(fs) > 0 && &keptFs[0] != &fs[0]) {
			batch, fs, cut = kept, keptFs, true // fs may still be read by the call cut off: do not reuse it
		}
		if len(batch) == 0 {
			return nil
		}
		e.pause(delay)
	}
	e.recorded(batch, errs)
	if cut {
		return nil
	}
	clear(fs) // the next batch's strings and events are its own
	return fs
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
	for _, p := range batch {
		if cur, ok := e.running[p.a.t.ID]; ok && cur == p.a {
			delete(e.running, p.a.t.ID)
		}
	}
	e.mu.Unlock()
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

func (e *Engine) pause(d time.Duration) {
	t := e.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
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
