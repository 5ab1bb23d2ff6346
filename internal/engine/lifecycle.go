package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/grit-run/grit/internal/proc"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Causes with which an attempt's context ends.
var (
	errReleased = errors.New("engine: worker stopping: attempt released")
	errTimedOut = errors.New("engine: attempt timed out")
)

// Start registers the worker, takes over the tasks of dead siblings on this
// host, and starts claiming. ctx bounds only the start; Stop ends the engine.
func (e *Engine) Start(ctx context.Context) error {
	if !e.started.CompareAndSwap(false, true) {
		return errors.New("engine: already started")
	}
	if e.child != nil {
		e.serveChild() // does not return: the process ends with its work
	}
	if e.children != nil {
		// Before the worker registers: a child that cannot start fails
		// Start with nothing done in the store.
		if err := e.children.warm(ctx, min(e.cfg.Isolation.Warm, e.cfg.Concurrency)); err != nil {
			e.children.close()
			e.children = newChildPool(e, e.cfg.Isolation)
			e.started.Store(false)
			return fmt.Errorf("engine: warm the isolated handlers' children: %w", err)
		}
	}
	e.runCtx, e.cancel = context.WithCancel(context.WithoutCancel(ctx))
	e.completeCtx, e.abandon = context.WithCancel(context.WithoutCancel(ctx))
	if err := e.register(ctx); err != nil {
		e.cancel()
		e.abandon()
		e.started.Store(false)
		return err
	}
	if err := e.declareSchedules(ctx); err != nil {
		e.cancel()
		e.abandon()
		e.started.Store(false)
		return err
	}
	e.logMissingOptional()
	e.cfg.Metrics.Slots(0, e.cfg.Concurrency)
	e.listen()
	e.watchCancels(ctx)
	e.followPauses(ctx)
	e.claimWG.Go(e.claimLoop)
	e.completerWG.Go(e.completer)
	e.leaseWG.Go(e.heartbeatLoop)
	e.leaseWG.Go(e.rescueLoop)
	e.leaseWG.Go(e.watchdog)
	e.leaseWG.Go(e.orphanLoop)
	e.leaseWG.Go(e.pruneLoop)
	e.leaseWG.Go(e.scheduleLoop)
	e.leaseWG.Go(e.machineLoop)
	if e.cfg.OnEvent != nil {
		e.eventWG.Go(e.eventLoop)
	}
	return nil
}

// register takes over what a predecessor under this identity held,
// records the worker, and takes over the tasks of dead siblings on this
// host.
func (e *Engine) register(ctx context.Context) error {
	if err := e.gate.MeasureSkew(ctx); err != nil {
		e.cfg.Logger.Warn("could not read the store's clock", "err", err)
	}
	host, _ := os.Hostname()
	if err := e.takeOverPredecessor(ctx, host); err != nil {
		return err
	}
	now := time.Now()
	w := task.Worker{ID: e.cfg.WorkerID, Host: host, PID: os.Getpid(), Version: e.cfg.Version, StartedAt: now, LastSeen: now, Active: true, Kinds: e.kinds}
	if err := e.cfg.Store.RegisterWorker(ctx, w); err != nil {
		return fmt.Errorf("engine: register worker: %w", err)
	}
	if err := e.rescueDeadSiblings(ctx, host); err != nil {
		e.cfg.Logger.Warn("rescue of dead workers on this host failed", "err", err)
	}
	e.endOrphans()
	if err := e.gate.Refresh(ctx); err != nil {
		e.cfg.Logger.Warn("could not read the groups and limits", "err", err)
	}
	e.advise(ctx)
	return nil
}

// advise logs what the store finds wrong with its database's setup.
func (e *Engine) advise(ctx context.Context) {
	a, ok := e.cfg.Store.(store.Advisor)
	if !ok {
		return
	}
	advice, err := a.Advice(ctx)
	if err != nil {
		e.cfg.Logger.Debug("could not check the store's setup", "err", err)
	}
	for _, msg := range advice {
		e.cfg.Logger.Warn(msg)
	}
}

// Stop stops claiming, lets running attempts finish until ctx ends, then
// releases what is left (back to READY, without using an attempt), records
// every result, delivers the alerts still waiting until ctx ends, and
// deactivates the worker.
//
// Stop returns when ctx ends, whatever is still unrecorded: once ctx has
// ended (or, when it has not, Config.RecordTimeout after the drain), a
// result the store has not taken gets one last try, and what the store
// does not take then (or within RecordTimeout) is abandoned: its lease
// lapses, so a late write is fenced off, and the rescue's interrupted rule
// decides, as for a worker that died. Stop logs the tasks it abandoned and
// returns an error that names them and wraps ctx's cause (or
// errRecordTimeout's message).
func (e *Engine) Stop(ctx context.Context) error {
	if !e.started.Load() {
		return errors.New("engine: not started")
	}
	if !e.stopped.CompareAndSwap(false, true) {
		<-e.done
		return nil
	}
	close(e.stopping)
	stopLast := context.AfterFunc(ctx, func() { e.last(e.cfg.RecordTimeout) })
	defer stopLast()
	e.claimWG.Wait()
	e.drain(ctx)
	e.closeExecutors()
	if e.children != nil {
		e.children.close()
	}
	close(e.finishes)
	rctx, rcancel := context.WithTimeout(context.Background(), e.cfg.RecordTimeout)
	defer rcancel()
	waitOr(rctx, &e.completerWG, func() { e.last(0); e.abandon() })
	e.cancel()
	e.leaseWG.Wait()
	close(e.events)
	e.eventWG.Wait()
	e.alerts.Stop(ctx)
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := e.cfg.Store.DeactivateWorker(dctx, e.cfg.WorkerID)
	e.cfg.Metrics.Slots(0, -e.cfg.Concurrency)
	if ids := e.rec.abandoned; len(ids) > 0 {
		cause := errRecordTimeout
		if ctx.Err() != nil {
			cause = context.Cause(ctx)
		}
		err = errors.Join(abandonedError(ids, cause), err)
	}
	close(e.done)
	return err
}

// last makes Stop's last try to record results: the completer tries what
// it holds and what comes once more, and abandons what the store does not
// take then; after grace, it abandons everything (its store calls end).
func (e *Engine) last(grace time.Duration) {
	e.lastOnce.Do(func() {
		close(e.lastTry)
		time.AfterFunc(grace, e.abandon)
	})
}

// drain waits for running attempts until ctx ends, then releases them and
// waits for their executors, which return within their grace.
func (e *Engine) drain(ctx context.Context) {
	finished := make(chan struct{})
	go func() { e.execs.Wait(); close(finished) }()
	select {
	case <-finished:
		return
	case <-ctx.Done():
	}
	e.mu.Lock()
	for _, a := range e.running {
		a.cancel(errReleased)
	}
	e.mu.Unlock()
	<-finished
}

func waitOr(ctx context.Context, wg interface{ Wait() }, onTimeout func()) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		onTimeout()
		<-done
	}
}

func (e *Engine) isStopping() bool {
	select {
	case <-e.stopping:
		return true
	default:
		return false
	}
}

// listen relays the store's notifications, when it has them, to the claim
// loop, so that work enqueued by another process starts at once rather
// than at the next poll. The listener connects while the claim loop makes
// its first claims, and wakes the loop once it listens: what was enqueued
// before then notified no one.
func (e *Engine) listen() {
	w, ok := e.cfg.Store.(store.Waker)
	if !ok {
		return
	}
	e.leaseWG.Go(func() {
		for n := 1; ; n++ {
			ch, err := w.Wake(e.runCtx)
			if err == nil {
				if n > 1 {
					e.cfg.Logger.Info("the store's notifications are back", "after_failures", n-1)
				}
				e.Wake()
				for range ch {
					e.Wake()
				}
				return
			}
			if e.runCtx.Err() != nil {
				return
			}
			if errors.Is(err, store.ErrNoNotifications) {
				e.cfg.Logger.Info("the store cannot notify this worker: it finds work enqueued by other processes by polling", "poll", e.cfg.Poll, "why", err)
				return
			}
			level := e.cfg.Logger.Debug
			if n == 1 {
				level = e.cfg.Logger.Warn
			}
			level("the store's notifications are unavailable; polling until they are back", "err", err, "poll", e.cfg.Poll, "failures", n)
			e.sleep(listenBackoff.Delay(n, 0, retry.DefaultRand))
		}
	})
}

// listenBackoff spaces the attempts to start the store's notifications
// when the first fails (the database was down, or the connection was cut
// while it opened): until one succeeds, the worker learns of new work only
// by polling.
var listenBackoff = retry.Exponential{Min: 50 * time.Millisecond, Max: 5 * time.Second}

// takeOverPredecessor releases at once what a previous process with this
// worker's identity held (a worker restarted under a stable name), instead
// of waiting for its leases to expire. A live process on this host with
// the same identity is an error: two workers must not share one.
func (e *Engine) takeOverPredecessor(ctx context.Context, host string) error {
	ws, err := e.cfg.Store.Workers(ctx)
	if err != nil {
		return fmt.Errorf("engine: list workers: %w", err)
	}
	for _, w := range ws {
		if w.ID != e.cfg.WorkerID {
			continue
		}
		if w.Active && w.Host == host && w.PID != os.Getpid() && processAlive(w.PID) {
			return fmt.Errorf("engine: worker id %q is in use by process %d on this host; give each worker its own id", w.ID, w.PID)
		}
		if err := e.rescue(ctx, w.ID); err != nil {
			return fmt.Errorf("engine: release the leases of this worker's predecessor: %w", err)
		}
		if w.Host == host {
			e.endPredecessors(w.ID)
		}
	}
	return nil
}

// rescueDeadSiblings takes over at once the leases of workers on this host
// whose process is gone (a predecessor killed with SIGKILL), instead of
// waiting for their leases to expire. (The processes they left are ended
// by endOrphans, whether a sibling had marked them inactive or not.)
func (e *Engine) rescueDeadSiblings(ctx context.Context, host string) error {
	ws, err := e.cfg.Store.Workers(ctx)
	if err != nil {
		return err
	}
	for _, w := range ws {
		if !w.Active || w.Host != host || w.ID == e.cfg.WorkerID || processAlive(w.PID) {
			continue
		}
		e.cfg.Logger.Info("taking over the tasks of a dead worker", "worker", w.ID, "pid", w.PID)
		if err := e.rescue(ctx, w.ID); err != nil {
			return err
		}
		if err := e.cfg.Store.DeactivateWorker(ctx, w.ID); err != nil {
			return err
		}
	}
	return nil
}

// endPredecessors kills the processes that a previous worker under this
// worker's identity started on this host. It runs before this worker
// starts any.
func (e *Engine) endPredecessors(worker string) {
	n, err := proc.KillTagged(workerTag, worker)
	if err != nil {
		e.cfg.Logger.Warn("ending a dead worker's processes failed", "worker", worker, "err", err)
	} else if n > 0 {
		e.cfg.Logger.Info("ended processes a dead worker left behind", "worker", worker, "processes", n)
	}
}

// endOrphans kills the processes that workers gone from this host left
// behind: a worker killed with SIGKILL takes the leaders of its process
// tasks with it (Pdeathsig), but not their descendants (a shell task's
// background jobs), which keep running, tagged with its pid. It never
// touches the processes of a live worker.
func (e *Engine) endOrphans() {
	n, err := proc.KillOrphans(workerPIDTag)
	if err != nil {
		e.cfg.Logger.Debug("could not look for the processes of dead workers", "err", err)
	} else if n > 0 {
		e.cfg.Logger.Info("ended processes that dead workers left behind", "processes", n)
	}
}

// orphanLoop ends the orphans of workers gone from this host every
// heartbeat (at most every second): a worker killed beside a live one
// leaves nothing running for longer than that.
func (e *Engine) orphanLoop() {
	t := e.cfg.Clock.NewTicker(max(e.cfg.Heartbeat, time.Second))
	defer t.Stop()
	for {
		select {
		case <-e.runCtx.Done():
			return
		case <-t.C():
		}
		e.endOrphans()
	}
}

func processAlive(pid int) bool { return proc.Alive(pid) }
