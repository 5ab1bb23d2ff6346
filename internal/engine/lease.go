package engine

import (
	"context"
	"time"

	"github.com/grit-run/grit/internal/clock"
	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/internal/proc"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// heartbeatLoop renews every lease this worker holds in one statement per
// beat. Leases the store no longer knows were lost: their attempts are
// cancelled at once (killing their processes).
//
// The leases are also watched on a timer of their own, on the engine's
// clock: a lease after the start of the last beat that succeeded (or after
// the start of the worker), every attempt is cancelled and its processes
// killed, for a sibling may already have taken them over; and again every
// heartbeat until a beat succeeds. The timer fires even while a beat hangs
// (a database whose connections stay open but never answer): a beat runs
// on its own goroutine, under a deadline of its own.
func (e *Engine) heartbeatLoop() {
	tick := e.cfg.Clock.NewTicker(e.cfg.Heartbeat)
	defer tick.Stop()
	renewed := e.cfg.Clock.Now()
	expiry := e.cfg.Clock.NewTimer(e.cfg.Lease)
	defer expiry.Stop()
	results := make(chan beat, 1)
	var inflight <-chan struct{} // closed when the beat in flight is over
	for {
		select {
		case <-e.runCtx.Done():
			if inflight != nil {
				<-inflight
			}
			return
		case <-expiry.C():
			e.cfg.Logger.Error("no heartbeat renewed the leases for a whole lease; cancelling every attempt", "since_last", e.cfg.Clock.Now().Sub(renewed))
			e.loseAll()
			rearm(expiry, e.cfg.Heartbeat)
		case <-tick.C():
			if !busy(inflight) {
				inflight = e.beat(renewed, results)
			}
		case b := <-results:
			if b.err != nil {
				e.cfg.Logger.Warn("heartbeat failed", "err", b.err, "since_last", e.cfg.Clock.Now().Sub(renewed))
				continue
			}
			if b.start.After(renewed) {
				renewed = b.start
			}
			rearm(expiry, e.cfg.Lease-e.cfg.Clock.Now().Sub(renewed))
		}
	}
}

// beat is a heartbeat's answer: when it started (the leases it renewed
// last at least a lease from then), and its error.
type beat struct {
	start time.Time
	err   error
}

// beat renews the leases on a goroutine of its own and sends its answer
// to results; it then refreshes the gate's groups and limits and ends the
// attempts whose lease was lost, and closes the returned channel. The
// renewal may take until the leases it renews would expire, less half a
// heartbeat (at least half a heartbeat): an answer after that comes too
// late, for the lease timer will have cancelled the attempts. The refresh
// may take half a lease: cut at a heartbeat, it fails needlessly on a busy
// database.
func (e *Engine) beat(renewed time.Time, results chan<- beat) <-chan struct{} {
	done := make(chan struct{})
	start := e.cfg.Clock.Now()
	d := max(renewed.Add(e.cfg.Lease).Sub(start)-e.cfg.Heartbeat/2, e.cfg.Heartbeat/2)
	held := e.leases()
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(e.runCtx, d)
		lost, err := e.cfg.Store.Heartbeat(ctx, e.cfg.WorkerID, e.cfg.Lease, held)
		cancel()
		if err != nil && e.runCtx.Err() != nil {
			return // the worker's stop cut the beat off: nothing failed
		}
		select {
		case results <- beat{start: start, err: err}:
		case <-e.runCtx.Done():
			return
		}
		if err != nil {
			return
		}
		ctx, cancel = context.WithTimeout(e.runCtx, e.cfg.Lease/2)
		defer cancel()
		if err := e.gate.Refresh(ctx); err != nil && e.runCtx.Err() == nil {
			e.cfg.Logger.Warn("could not refresh the groups and limits; keeping the last known", "err", err)
		}
		for _, l := range lost {
			e.lose(l)
		}
	}()
	return done
}

// rearm resets t to fire after d, dropping a tick it sent and no one read
// (a fake clock's timers keep it).
func rearm(t clock.Timer, d time.Duration) {
	t.Stop()
	select {
	case <-t.C():
	default:
	}
	t.Reset(d)
}

// busy reports whether the beat that closes done is still in flight.
func busy(done <-chan struct{}) bool {
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
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
		a.cancel(errLeaseLost{})
	}
}

// errLeaseLost ends an attempt whose lease was lost. It matches
// task.ErrLeaseLost, and proc.ErrKill: a sibling may already run the
// task, so its processes are killed at once, without the SIGTERM grace.
type errLeaseLost struct{}

func (errLeaseLost) Error() string { return task.ErrLeaseLost.Error() }

func (errLeaseLost) Is(target error) bool {
	return target == task.ErrLeaseLost || target == proc.ErrKill
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
		if e.cfg.OnEvent != nil { // the event is a copy of the task: made only for someone
			e.emit(Event{Time: now, Task: applied(*x.Task, *x.Finish), Attempt: x.Finish.Attempt})
		}
	}
}
