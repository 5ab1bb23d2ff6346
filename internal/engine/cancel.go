package engine

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// errCancelled ends an attempt whose task an operator cancelled. It
// matches task.ErrLeaseLost (the store took the lease back: the
// attempt's result will be refused) but not proc.ErrKill: nobody else
// runs the task, so its processes get SIGTERM and their grace.
type errCancelled struct{}

func (errCancelled) Error() string { return "the task was cancelled" }

func (errCancelled) Is(target error) bool { return target == task.ErrLeaseLost }

// cancelled remembers the tasks whose cancel the store announced, for a
// lease, so that an attempt claimed just before its cancel and not yet
// started is not started.
type cancelled struct {
	any atomic.Bool // set once a cancel is heard of: until then has is free
	mu  sync.Mutex
	ids map[int64]time.Time // when each was heard of
}

func (c *cancelled) add(id int64, now time.Time, keep time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil {
		c.ids = map[int64]time.Time{}
	}
	if len(c.ids) >= 1024 {
		for k, at := range c.ids {
			if now.Sub(at) > keep {
				delete(c.ids, k)
			}
		}
	}
	c.ids[id] = now
	c.any.Store(true)
}

func (c *cancelled) has(id int64) bool {
	if !c.any.Load() {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.ids[id]
	return ok
}

// watchCancels stops, as soon as the store announces it, the attempt of
// every task an operator cancels while this worker holds it (when the
// store is a store.CancelWatcher; otherwise the next heartbeat finds the
// lease gone). It returns once the first watch listens or fails, or after
// a heartbeat at most, so that the claim loop does not start attempts
// while the listener still connects. A failed watch is retried in the
// background, as the wake listener is; heartbeats find the cancels made
// meanwhile.
func (e *Engine) watchCancels(ctx context.Context) {
	w, ok := e.cfg.Store.(store.CancelWatcher)
	if !ok {
		return
	}
	tried := make(chan struct{})
	e.leaseWG.Go(func() {
		first := tried
		for n := 1; e.runCtx.Err() == nil; n++ {
			ch, err := w.WatchCancels(e.runCtx)
			if first != nil {
				close(first)
				first = nil
			}
			if errors.Is(err, store.ErrNoNotifications) {
				return // heartbeats find the cancels
			}
			if err != nil {
				e.cfg.Logger.Debug("the store's cancel notifications are unavailable; heartbeats will find cancels", "err", err, "failures", n)
				e.sleep(listenBackoff.Delay(n, 0, retry.DefaultRand))
				continue
			}
			for id := range ch {
				e.cancelTask(id)
			}
			n = 0 // a watch that listened and ended starts its backoff afresh
		}
	})
	wait := e.cfg.Clock.NewTimer(e.cfg.Heartbeat)
	defer wait.Stop()
	select {
	case <-tried:
	case <-wait.C():
	case <-ctx.Done():
	}
}

// followPauses keeps the gate's pauses current as the store announces
// them (gate.FollowPauses), so that an attempt claimed before a pause is
// not started after it. Like watchCancels, it returns once the first
// watch listens or fails, or after a heartbeat at most.
func (e *Engine) followPauses(ctx context.Context) {
	tried := make(chan struct{})
	e.leaseWG.Go(func() { e.gate.FollowPauses(e.runCtx, tried) })
	wait := e.cfg.Clock.NewTimer(e.cfg.Heartbeat)
	defer wait.Stop()
	select {
	case <-tried:
	case <-wait.C():
	case <-ctx.Done():
	}
}

// cancelTask stops the attempt of task id, if this worker runs it, and
// remembers the cancel for an attempt not yet started.
func (e *Engine) cancelTask(id int64) {
	e.cancels.add(id, e.cfg.Clock.Now(), 2*e.cfg.Lease)
	e.mu.Lock()
	a, ok := e.running[id]
	e.mu.Unlock()
	if ok && !a.ended.Load() {
		e.cfg.Logger.Info("task cancelled; stopping its attempt", "task", id, "attempt", a.t.Attempt)
		a.cancelled.Store(true)
		a.cancel(errCancelled{})
	}
}

// confirm makes sure, right before an attempt's process starts, that the
// worker still holds its lease: the next heartbeat renews that lease with
// every other (heartbeatLoop), so a task cancelled or taken over since
// its claim is not started. A store that does not answer within a
// heartbeat does not stop the start: the lease timer still bounds the
// attempt.
func (e *Engine) confirm(ctx context.Context, a *inflight) error {
	if e.cancels.has(a.t.ID) {
		a.cancelled.Store(true)
		a.cancel(errCancelled{})
		return context.Cause(ctx)
	}
	cctx, cancel := context.WithTimeout(ctx, e.cfg.Heartbeat)
	defer cancel()
	ans := e.renewBeforeStart(cctx, store.Lease{TaskID: a.t.ID, Token: a.t.LeaseToken})
	if ans.err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		e.cfg.Logger.Debug("could not confirm the lease before starting a process; starting it", "task", a.t.ID, "err", ans.err)
		return nil
	}
	if ans.lost {
		a.cancel(errLeaseLost{})
		return context.Cause(ctx)
	}
	return nil
}

// confirmKey finds, in a handler's context, the function that confirms
// its attempt's lease (Engine.confirm).
type confirmKey struct{}

// confirmLease confirms the lease of the attempt ctx belongs to; outside
// an attempt it does nothing.
func confirmLease(ctx context.Context) error {
	if c, ok := ctx.Value(confirmKey{}).(*attemptCtx); ok && c.e != nil {
		return c.e.confirm(ctx, c.a)
	}
	return nil
}
