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
// cancelled at once (killing their processes). A beat goes every
// heartbeat, and at once when attempts wait to start a process
// (confirm): those ask the database whether their lease still holds, and
// the next beat, which renews every lease, answers them all, so that a
// worker that starts a thousand processes sends one statement at a time,
// never a thousand.
//
// The leases are also watched on a timer of their own, on the engine's
// clock: a lease after the start of the last beat that succeeded (or after
// the start of the worker), every attempt is cancelled and its processes
// killed, for a sibling may already have taken them over; and again every
// heartbeat until a beat succeeds. The timer fires even while a beat hangs
// (a database whose connections stay open but never answer): a beat runs
// on its own goroutine, under a deadline of its own.
//
// A timer that fires late tells of a process starved of CPU, not of a
// silent database: the beat was starved too, or its answer waits to be
// read. Then the database is asked once more (a beat, given a heartbeat)
// before every attempt is given up: its answer names the leases truly
// lost (see starved).
func (e *Engine) heartbeatLoop() {
	tick := e.cfg.Clock.NewTicker(e.cfg.Heartbeat)
	defer tick.Stop()
	w := &leaseWatch{e: e, renewed: e.cfg.Clock.Now(), expiry: e.cfg.Clock.NewTimer(e.cfg.Lease), results: make(chan beat, 1)}
	defer w.expiry.Stop()
	w.due = w.renewed.Add(e.cfg.Lease)
	for {
		select {
		case <-e.runCtx.Done():
			if w.inflight != nil {
				<-w.inflight
			}
			return
		case <-w.expiry.C():
			w.expired()
		case <-tick.C():
			w.refresh = true
			w.send()
		case <-e.confirms.ready:
			w.send()
		case <-w.inflight: // nil, and never ready, while no beat is in flight
			w.over()
		case b := <-w.results:
			w.answered(b)
		}
	}
}

// leaseWatch is the state of the heartbeat loop.
type leaseWatch struct {
	e        *Engine
	renewed  time.Time // when the last beat that succeeded began
	expiry   clock.Timer
	due      time.Time // when expiry is to fire
	graced   bool      // a starved process was given a beat since the last renewal
	refresh  bool      // the next beat refreshes the gate (a heartbeat passed)
	again    bool      // a beat was asked for while one was in flight
	results  chan beat
	inflight chan struct{} // closed when the beat in flight is over; nil if none
}

// send starts a beat unless one is in flight, in which case one starts
// when it is over.
func (w *leaseWatch) send() {
	if w.inflight != nil {
		w.again = true
		return
	}
	w.inflight = w.e.beat(w.renewed, w.results, w.refresh)
	w.refresh, w.again = false, false
}

// over is the end of the beat in flight: the next goes at once if one
// was asked for meanwhile.
func (w *leaseWatch) over() {
	w.inflight = nil
	if w.again || w.e.confirms.len() > 0 {
		w.send()
	}
}

// arm sets the lease timer to fire after d (at once if d is not
// positive), and remembers when.
func (w *leaseWatch) arm(d time.Duration) {
	d = max(d, 0)
	rearm(w.expiry, d)
	w.due = w.e.cfg.Clock.Now().Add(d)
}

// answered takes a beat's answer. A renewal read only after the lease it
// began was over tells of a process starved of CPU (the database
// answered): as a lease timer that fired late, it gets one more beat.
func (w *leaseWatch) answered(b beat) {
	e := w.e
	now := e.cfg.Clock.Now()
	if b.err != nil {
		e.cfg.Logger.Warn("heartbeat failed", "err", b.err, "since_last", now.Sub(w.renewed))
		return
	}
	if b.start.After(w.renewed) {
		w.renewed = b.start
	}
	left := e.cfg.Lease - now.Sub(w.renewed)
	if left > 0 {
		w.graced = false
		e.runWait() // the window of the next look starts now
		w.arm(left)
		return
	}
	w.starved("a heartbeat's answer was read a lease after it began", now, -left, e.runWait())
}

// expired handles the lease timer: a beat's answer that came with it
// goes first, and a renewal ends the matter (answered re-arms the timer);
// a failed beat's answer does not, for it arms nothing, and the timer
// that fired is the only one: then, as when no answer came, a process
// starved of CPU gets one more beat (starved), else every attempt is
// given up.
func (w *leaseWatch) expired() {
	e := w.e
	select {
	case b := <-w.results:
		w.answered(b)
		if b.err == nil {
			return
		}
	default:
	}
	now := e.cfg.Clock.Now()
	late, wait := now.Sub(w.due), e.runWait()
	if max(late, wait) > starvedAfter(e.cfg.Heartbeat) {
		w.starved("the lease timer fired late, or goroutines waited long to run", now, late, wait)
		return
	}
	w.loseAll(now)
}

func (w *leaseWatch) loseAll(now time.Time) {
	w.e.cfg.Logger.Error("no heartbeat renewed the leases for a whole lease; cancelling every attempt", "since_last", now.Sub(w.renewed))
	w.e.loseAll()
	w.arm(w.e.cfg.Heartbeat)
}

// beat is a heartbeat's answer: when it started (the leases it renewed
// last at least a lease from then), and its error.
type beat struct {
	start time.Time
	err   error
}

// beat renews the leases on a goroutine of its own, answers the attempts
// that waited for it to start their process, sends its answer to results,
// ends the attempts whose lease was lost and, if refresh, refreshes the
// gate's groups and limits; then it closes the returned channel. The
// renewal may take until the leases it renews would expire, less half a
// heartbeat (at least half a heartbeat): an answer after that comes too
// late, for the lease timer will have cancelled the attempts. The refresh
// may take half a lease: cut at a heartbeat, it fails needlessly on a busy
// database.
func (e *Engine) beat(renewed time.Time, results chan<- beat, refresh bool) chan struct{} {
	done := make(chan struct{})
	start := e.cfg.Clock.Now()
	d := max(renewed.Add(e.cfg.Lease).Sub(start)-e.cfg.Heartbeat/2, e.cfg.Heartbeat/2)
	waiting := e.confirms.take()
	held := withWaiting(e.leases(), waiting)
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(e.runCtx, d)
		lost, err := e.cfg.Store.Heartbeat(ctx, e.cfg.WorkerID, e.cfg.Lease, held)
		cancel()
		answer(waiting, lost, err)
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
		for _, l := range lost {
			e.lose(l)
		}
		if refresh {
			e.refreshGate()
		}
	}()
	return done
}

// refreshGate reads the groups and limits again, for half a lease at most.
func (e *Engine) refreshGate() {
	ctx, cancel := context.WithTimeout(e.runCtx, e.cfg.Lease/2)
	defer cancel()
	if err := e.gate.Refresh(ctx); err != nil && e.runCtx.Err() == nil {
		e.cfg.Logger.Warn("could not refresh the groups and limits; keeping the last known", "err", err)
	}
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
