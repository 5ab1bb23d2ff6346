package gritbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Procs is the throughput of no-op tasks worked by worker processes.
type Procs struct {
	Workers int     `json:"workers"`
	PerSec  float64 `json:"per_sec"`
	PeakMiB float64 `json:"peak_rss_mib,omitempty"` // the largest worker's peak resident set
}

// workProcs enqueues no-op tasks, then times worker processes working them
// all, from the moment they are told to start until they have recorded
// every result; the store is then checked to hold every task as SUCCESS.
func workProcs(ctx context.Context, open Opener, cfg Config, r *Result) error {
	for _, n := range cfg.Workers {
		err := withTarget(open, func(tg Target) error {
			if err := enqueueNoops(ctx, tg, cfg.Tasks, cfg.Batch); err != nil {
				return err
			}
			ws, err := spawnN(ctx, cfg, tg.DSN, n)
			if err != nil {
				return err
			}
			defer stopAll(ws)
			begin := time.Now()
			if err := waitFinished(ctx, ws, cfg.Tasks, func() error {
				for _, w := range ws {
					if err := w.start(ctx); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				return err
			}
			p := Procs{Workers: n, PerSec: float64(cfg.Tasks) / time.Since(begin).Seconds()}
			for _, w := range ws {
				_, peak, _ := memory(w.cmd.Process.Pid)
				p.PeakMiB = max(p.PeakMiB, peak)
			}
			if err := stopAll(ws); err != nil {
				return err
			}
			if got, err := count(ctx, tg.Store, task.Success); err != nil || got != cfg.Tasks {
				return fmt.Errorf("%d workers: %d of %d tasks SUCCESS in the store (%v)", n, got, cfg.Tasks, err)
			}
			r.WorkProcs = append(r.WorkProcs, p)
			return nil
		})
		if err != nil {
			return fmt.Errorf("%d worker processes: %w", n, err)
		}
	}
	return nil
}

func enqueueNoops(ctx context.Context, st store.Store, n, batch int) error {
	for done := 0; done < n; done += batch {
		if _, err := st.Enqueue(ctx, noops(min(batch, n-done), kindNoop)); err != nil {
			return err
		}
	}
	return nil
}

func spawnN(ctx context.Context, cfg Config, dsn string, n int) ([]*workerProc, error) {
	var ws []*workerProc
	for range n {
		w, err := spawn(ctx, cfg.Spawn, dsn, cfg.Concurrency)
		if err != nil {
			stopAll(ws)
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, nil
}

// waitFinished runs begin, then waits until the workers together report
// n results recorded, or until none comes for stall.
func waitFinished(ctx context.Context, ws []*workerProc, n int, begin func() error) error {
	type report struct{ w, n int }
	reports := make(chan report)
	quit := make(chan struct{})
	defer close(quit)
	if err := begin(); err != nil {
		return err
	}
	for i, w := range ws {
		go func() {
			for l := range w.lines {
				if k, ok := finishedCount(l); ok {
					select {
					case reports <- report{i, k}:
					case <-quit:
						return
					}
				}
			}
		}()
	}
	per := make([]int, len(ws))
	total := 0
	t := time.NewTimer(stall)
	defer t.Stop()
	for total < n {
		select {
		case rp := <-reports:
			if rp.n > per[rp.w] {
				t.Reset(stall)
			}
			total += rp.n - per[rp.w]
			per[rp.w] = rp.n
		case <-t.C:
			return stalled(total, n)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// stall is how long the benchmark waits for its workers' next result
// before it calls them hung. It bounds a hang, not a speed: a machine
// busy with other work (a race build on two cores) has taken minutes over
// 1,000 no-op tasks, but never long without finishing one.
const stall = time.Minute

// stalled is the error of workers that finished no task for stall.
func stalled(done, n int) error {
	return fmt.Errorf("no task finished for %v, with %d of %d done: the workers seem hung", stall, done, n)
}

func finishedCount(line string) (int, bool) {
	v, ok := strings.CutPrefix(line, "finished ")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}

// count is how many of the store's tasks are in state.
func count(ctx context.Context, st store.Store, state task.State) (int, error) {
	o, ok := st.(store.Overview)
	if !ok {
		return 0, errors.New("the store cannot count tasks by state")
	}
	qs, err := o.QueueCounts(ctx)
	n := 0
	for _, q := range qs {
		if q.State == state {
			n += q.N
		}
	}
	return n, err
}

// startLatency measures how long after its enqueue each task starts, with
// a worker idle and waiting. Tasks are enqueued one at a time, a few
// milliseconds apart. On a store that notifies other processes at once
// (PostgreSQL), a worker process learns of each task from the store, as a
// fleet does; on an embedded one (SQLite, whose other processes hear only
// at its watcher's next look), the enqueuing process's own engine is
// woken, as Client.Enqueue does.
func startLatency(ctx context.Context, open Opener, cfg Config, r *Result) error {
	return withTarget(open, func(tg Target) error {
		started := make(chan time.Duration, cfg.Latency)
		wake, stop, err := latencyWorker(ctx, cfg, tg, started)
		if err != nil {
			return err
		}
		defer stop()
		r.StartVia = "store notification, worker process"
		if wake != nil {
			r.StartVia = "in-process wake"
		}
		var late []float64
		tick := time.NewTicker(cfg.LatencyGap)
		defer tick.Stop()
		for range cfg.Latency {
			args, _ := json.Marshal(stamp{T: time.Now().UnixNano()})
			if _, err := tg.Enqueue(ctx, []task.NewTask{{Kind: kindStamp, Args: args}}); err != nil {
				return err
			}
			if wake != nil {
				wake()
			}
			<-tick.C
		}
		for range cfg.Latency {
			select {
			case d := <-started:
				late = append(late, ms(d))
			case <-time.After(time.Minute):
				return fmt.Errorf("%d of %d tasks started", len(late), cfg.Latency)
			}
		}
		r.StartP50, r.StartP90, r.StartP99, r.StartMax = pct(late, 50), pct(late, 90), pct(late, 99), pct(late, 100)
		return stop()
	})
}

// embedded tells a SQLite target, which the enqueue-to-start figure
// measures in one process (startLatency).
func embedded(tg Target) bool { return !strings.HasPrefix(tg.DSN, "postgres") }

// latencyWorker starts what works stamp tasks and reports their start.
// wake is non-nil when the enqueuer must wake it.
func latencyWorker(ctx context.Context, cfg Config, tg Target, started chan<- time.Duration) (wake func(), stop func() error, err error) {
	if _, ok := tg.Store.(store.Waker); !ok || cfg.Spawn == nil || embedded(tg) {
		e, err := newEngine(cfg, tg.Store, cfg.Concurrency, nil)
		if err != nil {
			return nil, nil, err
		}
		for _, h := range handlers(func(_ int64, d time.Duration) { started <- d }) {
			if err := e.Register(h); err != nil {
				return nil, nil, err
			}
		}
		if err := e.Start(ctx); err != nil {
			return nil, nil, err
		}
		return e.Wake, func() error { return e.Stop(ctx) }, nil
	}
	w, err := spawn(ctx, cfg.Spawn, tg.DSN, cfg.Concurrency)
	if err != nil {
		return nil, nil, err
	}
	if err := w.start(ctx); err != nil {
		w.kill()
		return nil, nil, err
	}
	go func() {
		for l := range w.lines {
			if v, ok := strings.CutPrefix(l, "started "); ok {
				_, ns, _ := strings.Cut(v, " ")
				d, _ := strconv.ParseInt(ns, 10, 64)
				started <- time.Duration(d)
			}
		}
	}()
	stopped := false
	return nil, func() error {
		if stopped {
			return nil
		}
		stopped = true
		return w.stop()
	}, nil
}

// takeover measures how long after a worker is killed with SIGKILL a
// sibling on the same store has taken over all its tasks: the sibling
// waits for the dead worker's leases to expire, as on another machine
// (a worker restarted on the same host would take them over at once).
func takeover(ctx context.Context, open Opener, cfg Config, r *Result) error {
	const held = 20
	return withTarget(open, func(tg Target) error {
		victim, err := spawn(ctx, cfg.Spawn, tg.DSN, cfg.Concurrency)
		if err != nil {
			return err
		}
		defer victim.kill()
		ts, err := tg.Enqueue(ctx, noops(held, kindHold))
		if err != nil {
			return err
		}
		if err := victim.start(ctx); err != nil {
			return err
		}
		if err := until(ctx, time.Minute, func() (bool, error) {
			n, err := count(ctx, tg.Store, task.Running)
			return n == held, err
		}); err != nil {
			return fmt.Errorf("the first worker did not take the tasks: %w", err)
		}
		sibling, err := spawn(ctx, cfg.Spawn, tg.DSN, cfg.Concurrency)
		if err != nil {
			return err
		}
		defer sibling.stop()
		if err := sibling.start(ctx); err != nil {
			return err
		}
		killed := time.Now()
		if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			return err
		}
		bound := cfg.Engine.Lease + cfg.Engine.Heartbeat + 2*time.Second
		if err := until(ctx, 3*bound, func() (bool, error) { return allHeldBy(ctx, tg, store.Tasks(ts), sibling.id) }); err != nil {
			return fmt.Errorf("the sibling did not take over: %w", err)
		}
		r.TakeoverS = time.Since(killed).Seconds()
		r.TakeoverBoundS = bound.Seconds()
		return nil
	})
}

// allHeldBy tells whether worker is running a new attempt of every task
// (a task rescued but not yet claimed again is held by the rescuer under
// its old attempt).
func allHeldBy(ctx context.Context, st store.Store, ts []task.Task, worker string) (bool, error) {
	for _, t := range ts {
		got, err := st.GetTask(ctx, t.ID)
		if err != nil || got.State != task.Running || got.LeaseOwner != worker || got.Attempt < 2 {
			return false, err
		}
	}
	return true, nil
}

// until polls cond every 10ms until it holds.
func until(ctx context.Context, limit time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(limit)
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %v", limit)
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
