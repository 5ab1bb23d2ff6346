package engine

import (
	"context"

	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// heartbeatLoop renews every lease this worker holds in one statement per
// beat. Leases the store no longer knows were lost: their attempts are
// cancelled at once (killing their processes). When the store cannot be
// reached for longer than a lease, every attempt is cancelled: a sibling
// may already have taken them over.
func (e *Engine) heartbeatLoop() {
	t := e.cfg.Clock.NewTicker(e.cfg.Heartbeat)
	defer t.Stop()
	lastOK := e.cfg.Clock.Now()
	for {
		select {
		case <-e.runCtx.Done():
			return
		case <-t.C():
		}
		lost, err := e.cfg.Store.Heartbeat(e.runCtx, e.cfg.WorkerID, e.cfg.Lease, e.leases())
		if err != nil {
			if e.runCtx.Err() != nil {
				return // the worker's stop cut the beat off: nothing failed
			}
			e.cfg.Logger.Warn("heartbeat failed", "err", err, "since_last", e.cfg.Clock.Now().Sub(lastOK))
			if e.cfg.Clock.Now().Sub(lastOK) > e.cfg.Lease {
				e.loseAll()
			}
			continue
		}
		lastOK = e.cfg.Clock.Now()
		if err := e.gate.Refresh(e.runCtx); err != nil && e.runCtx.Err() == nil {
			e.cfg.Logger.Warn("could not refresh the groups and limits; keeping the last known", "err", err)
		}
		for _, l := range lost {
			e.lose(l)
		}
	}
}

func (e *Engine) leases() []store.Lease {
	e.mu.Lock()
	defer e.mu.Unlock()
	ls := make([]store.Lease, 0, len(e.running))
	for _, a := range e.running {
		ls = append(ls, store.Lease{TaskID: a.t.ID, Token: a.t.LeaseToken})
	}
	return ls
}

func (e *Engine) lose(l store.Lease) {
	e.mu.Lock()
	a, ok := e.running[l.TaskID]
	e.mu.Unlock()
	// An attempt whose handler has returned is over: its result is being
	// recorded (which is why the store no longer holds its lease) or will be
	// refused if the lease was truly lost; there is nothing to cancel.
	if ok && a.t.LeaseToken == l.Token && !a.ended.Load() {
		e.cfg.Logger.Warn("lease lost; cancelling the attempt", "task", l.TaskID, "token", l.Token)
		a.cancel(task.ErrLeaseLost)
	}
}

func (e *Engine) loseAll() {
	for _, l := range e.leases() {
		e.lose(l)
	}
}

// rescueLoop takes over tasks whose lease expired (their worker died or
// froze), every heartbeat: the gate's one rescue loop, which every worker
// runs, so the fleet recovers as long as one worker lives.
func (e *Engine) rescueLoop() {
	e.gate.RescueLoop(e.runCtx, e.cfg.Heartbeat, store.RescueRequest{Worker: e.cfg.WorkerID, Lease: e.cfg.Lease}, e.rescued)
}

// rescue takes over all of an owner's leases (a dead worker known to be
// dead) and applies each task's interrupted rule.
func (e *Engine) rescue(ctx context.Context, owner string) error {
	return e.gate.Rescue(ctx, store.RescueRequest{Worker: e.cfg.WorkerID, Lease: e.cfg.Lease, Owner: owner}, e.rescued)
}

// rescued counts and reports the tasks a rescue decided.
func (e *Engine) rescued(ends []gate.End) {
	now := e.storeNow()
	for _, x := range ends {
		if x.Err != nil {
			continue
		}
		e.stats.Rescued.Add(1)
		e.emit(Event{Time: now, Task: applied(*x.Task, *x.Finish), Attempt: x.Finish.Attempt})
	}
}
