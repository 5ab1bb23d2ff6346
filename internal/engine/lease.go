package engine

import (
	"context"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// heartbeatLoop renews every lease this worker holds in one statement per
// beat. Leases the store no longer knows were lost: their attempts are
// cancelled at once (killing their processes). When the store cannot be
// reached for longer than a lease, every attempt is cancelled: a sibling
// may already have taken them over.
func (e *Engine) heartbeatLoop() {
	t := time.NewTicker(e.cfg.Heartbeat)
	defer t.Stop()
	lastOK := time.Now()
	for {
		select {
		case <-e.runCtx.Done():
			return
		case <-t.C:
		}
		lost, err := e.cfg.Store.Heartbeat(e.runCtx, e.cfg.WorkerID, e.cfg.Lease, e.leases())
		if err != nil {
			if e.runCtx.Err() != nil {
				return // the worker's stop cut the beat off: nothing failed
			}
			e.cfg.Logger.Warn("heartbeat failed", "err", err, "since_last", time.Since(lastOK))
			if time.Since(lastOK) > e.cfg.Lease {
				e.loseAll()
			}
			continue
		}
		lastOK = time.Now()
		e.measureSkew(e.runCtx)
		e.refreshCircuits(e.runCtx)
		e.refreshLimits(e.runCtx)
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
	if ok && a.t.LeaseToken == l.Token {
		e.cfg.Logger.Warn("lease lost; cancelling the attempt", "task", l.TaskID, "token", l.Token)
		a.cancel(task.ErrLeaseLost)
	}
}

func (e *Engine) loseAll() {
	for _, l := range e.leases() {
		e.lose(l)
	}
}

// rescueLoop takes over tasks whose lease expired: their worker died or
// froze. It runs on every worker, so the fleet recovers as long as one
// worker lives.
func (e *Engine) rescueLoop() {
	t := time.NewTicker(e.cfg.Heartbeat)
	defer t.Stop()
	for {
		if err := e.rescue(e.runCtx, store.RescueRequest{}); err != nil && e.runCtx.Err() == nil {
			e.cfg.Logger.Warn("rescue failed", "err", err)
		}
		select {
		case <-e.runCtx.Done():
			return
		case <-t.C:
		}
	}
}

// rescue takes over expired (or, with req.Owner, all of an owner's) leases
// and applies each task's interrupted rule.
func (e *Engine) rescue(ctx context.Context, req store.RescueRequest) error {
	req.Worker, req.Lease = e.cfg.WorkerID, e.cfg.Lease
	for {
		req.Limit = 100
		ts, err := e.cfg.Store.Rescue(ctx, req)
		if err != nil || len(ts) == 0 {
			return err
		}
		now := e.storeNow()
		fs := make([]store.Finish, len(ts))
		for i, t := range ts {
			fs[i] = e.interrupted(t, now)
		}
		if _, err := e.cfg.Store.Finish(ctx, fs); err != nil {
			return err
		}
		e.stats.Rescued.Add(int64(len(ts)))
		for i, t := range ts {
			e.cfg.Logger.Info("rescued a task from a silent worker", "task", t.ID, "state", fs[i].State)
			e.emit(Event{Time: now, Task: applied(t, fs[i]), Attempt: fs[i].Attempt})
		}
		e.Wake()
	}
}
