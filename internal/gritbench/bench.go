// Package gritbench measures grit on a store: enqueue throughput, directly
// and through the gRPC API, the throughput of no-op tasks worked end to
// end (claim, run, complete) by an engine in this process, by remote
// workers through the gRPC API and by worker processes, what isolating a
// handler in child processes adds to an attempt, how long after its enqueue a task starts, the lateness of
// retries against their due time, how long a sibling takes over from a
// worker killed with SIGKILL, a worker's memory over a long run, and a
// process task's overhead over a bare fork/exec. grit bench prints what it
// measures.
package gritbench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"slices"
	"sync/atomic"
	"time"

	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Config sizes the measurements.
type Config struct {
	Tasks       int // tasks per throughput measurement; default 20,000
	Batch       int // tasks per enqueue call; default 500
	Concurrency int // executor slots per engine; default 256
	Retries     int // tasks whose retry lateness is measured; default 500
	Procs       int // process tasks run for the overhead; default 200
	// Workers lists the counts of worker processes whose throughput is
	// measured; default 1 and 4. The steps with worker processes run only
	// with Spawn.
	Workers []int
	// Latency is the number of tasks whose start is timed, enqueued
	// LatencyGap apart; default 1,000, 5ms.
	Latency    int
	LatencyGap time.Duration
	// Engine is the configuration every engine of the benchmark starts
	// from, in this process and in the worker processes, which Spawn must
	// start with the same: grit bench makes it from its flags and GRIT_*
	// variables as grit worker makes its own. Each engine has its own
	// store, concurrency, worker id and OnEvent. Zero fields mean the
	// engine's defaults; the lease is 15s unless set, and the heartbeat
	// a third of it.
	Engine engine.Config
	// MemoryTasks, if set, is how many tasks one worker process works while
	// its memory is sampled.
	MemoryTasks int
	// Takeover measures the takeover after SIGKILL (it takes about a lease).
	Takeover bool
	Spawn    Spawner

	// APITasks, if set, is how many tasks are enqueued through the gRPC API
	// in each of its two modes, by APICallers concurrent callers (default
	// 32), batched in EnqueueBatch calls of up to APIBatch (default 50, the
	// client's).
	APITasks, APICallers, APIBatch int
	// RemoteWorkers, if set, is how many remote workers on the Go client
	// work Tasks no-op tasks through the gRPC API, in each of its two
	// modes (RemoteWork), each claiming up to RemoteClaim tasks a call
	// (default 100).
	RemoteWorkers, RemoteClaim int
	// Isolated, if set, is how many no-op tasks are worked by a handler
	// isolated in child processes, and as many by one in this process,
	// at IsolatedSlots slots (default 16: a child is a process, and a
	// worker isolates what it must, not hundreds of slots). Child is the
	// children's command: a program that, started as a child
	// (engine.IsChild), makes engine.NewChild, registers
	// RegisterIsolated and starts it.
	Isolated, IsolatedSlots int
	Child                   []string
}

func (c *Config) defaults() {
	c.Tasks = or(c.Tasks, 20_000)
	c.Batch = or(c.Batch, 500)
	c.Concurrency = or(c.Concurrency, 256)
	c.IsolatedSlots = or(c.IsolatedSlots, 16)
	c.Retries = or(c.Retries, 500)
	c.Procs = or(c.Procs, 200)
	if c.Workers == nil {
		c.Workers = []int{1, 4}
	}
	c.Latency = or(c.Latency, 1000)
	c.APICallers = or(c.APICallers, 32)
	c.APIBatch = or(c.APIBatch, 50)
	c.RemoteClaim = or(c.RemoteClaim, 100)
	if c.LatencyGap <= 0 {
		c.LatencyGap = 5 * time.Millisecond
	}
	if c.Engine.Lease <= 0 {
		c.Engine.Lease = gate.DefaultLease
	}
	if c.Engine.Heartbeat <= 0 {
		c.Engine.Heartbeat = gate.Heartbeat(c.Engine.Lease)
	}
}

// engineConfig is the configuration of an engine of the benchmark in this
// process: Config.Engine's, over st, with conc executor slots.
func (c *Config) engineConfig(st store.Store, conc int, onEvent func(engine.Event)) engine.Config {
	ec := c.Engine
	ec.Store, ec.Concurrency, ec.OnEvent, ec.WorkerID = st, conc, onEvent, ""
	if ec.Logger == nil {
		ec.Logger = slog.New(slog.DiscardHandler)
	}
	return ec
}

// Target is a fresh store for one measurement, and the DSN by which worker
// processes open the same store.
type Target struct {
	store.Store
	DSN string
}

// Opener opens a fresh Target; closing its store discards it.
type Opener func() (Target, error)

func or(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// Result is what one run of the benchmark measured.
type Result struct {
	EnqueuePerSec float64 `json:"enqueue_per_sec"`
	WorkPerSec    float64 `json:"work_per_sec"`
	ClaimBatch    float64 `json:"claim_batch"` // tasks per claim while working
	RetryLateP50  float64 `json:"retry_lateness_p50_ms"`
	RetryLateP99  float64 `json:"retry_lateness_p99_ms"`
	RetryLateMax  float64 `json:"retry_lateness_max_ms"`
	ExecTaskMS    float64 `json:"exec_task_ms"`     // per process task, enqueue to SUCCESS, one at a time
	BareExecMS    float64 `json:"bare_exec_ms"`     // per bare fork/exec of the same command
	ExecOverhead  float64 `json:"exec_overhead_ms"` // the difference

	APIEnqueue
	RemoteWork
	IsolatedWork

	WorkProcs []Procs `json:"work_procs,omitempty"`
	// How long after its enqueue a task started, in ms, and how the worker
	// learnt of it.
	StartP50 float64 `json:"start_p50_ms"`
	StartP90 float64 `json:"start_p90_ms"`
	StartP99 float64 `json:"start_p99_ms"`
	StartMax float64 `json:"start_max_ms"`
	StartVia string  `json:"start_via"`
	// Seconds from SIGKILL until a sibling ran every task again, and the
	// bound the lease sets (lease + heartbeat + 2s).
	TakeoverS      float64 `json:"takeover_s,omitempty"`
	TakeoverBoundS float64 `json:"takeover_bound_s,omitempty"`
	// A worker's resident set after each tenth of MemoryTasks, and at its
	// peak, in MiB.
	MemoryTasks   int       `json:"memory_tasks,omitempty"`
	MemoryPerSec  float64   `json:"memory_per_sec,omitempty"`
	MemoryMiB     []float64 `json:"memory_rss_mib,omitempty"`
	MemoryPeakMiB float64   `json:"memory_peak_mib,omitempty"`
}

type step struct {
	name string
	fn   func(context.Context, Opener, Config, *Result) error
}

// Run measures on a fresh store; open opens one per measurement.
func Run(ctx context.Context, open Opener, cfg Config, progress func(string)) (Result, error) {
	cfg.defaults()
	var r Result
	steps := []step{{"enqueue", enqueue}}
	if cfg.APITasks > 0 {
		steps = append(steps, step{"enqueue through the API", apiEnqueue})
	}
	steps = append(steps, step{"work", work})
	if cfg.RemoteWorkers > 0 {
		steps = append(steps, step{"work by remote workers", remoteWork})
	}
	if cfg.Spawn != nil && len(cfg.Workers) > 0 {
		steps = append(steps, step{"work with worker processes", workProcs})
	}
	if cfg.Isolated > 0 {
		steps = append(steps, step{"isolated handlers", isolatedWork})
	}
	steps = append(steps, step{"enqueue-to-start latency", startLatency}, step{"retry lateness", lateness})
	if cfg.Spawn != nil && cfg.Takeover {
		steps = append(steps, step{"takeover after SIGKILL", takeover})
	}
	if cfg.Spawn != nil && cfg.MemoryTasks > 0 {
		steps = append(steps, step{"worker memory", workerMemory})
	}
	steps = append(steps, step{"process overhead", execOverhead})
	for _, s := range steps {
		progress(s.name)
		if err := s.fn(ctx, open, cfg, &r); err != nil {
			return r, fmt.Errorf("bench %s: %w", s.name, err)
		}
	}
	return r, nil
}

// withTarget runs fn on a fresh target and discards it after; a target
// that cannot be discarded is an error too (a schema left behind).
func withTarget(open Opener, fn func(Target) error) (err error) {
	tg, err := open()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, tg.Close()) }()
	return fn(tg)
}

func withStore(open Opener, fn func(store.Store) error) error {
	return withTarget(open, func(tg Target) error { return fn(tg.Store) })
}

func noops(n int, kind string) []task.NewTask {
	ts := make([]task.NewTask, n)
	for i := range ts {
		ts[i] = task.NewTask{Kind: kind}
	}
	return ts
}

func enqueue(ctx context.Context, open Opener, cfg Config, r *Result) error {
	return withStore(open, func(st store.Store) error {
		begin := time.Now()
		for done := 0; done < cfg.Tasks; done += cfg.Batch {
			if _, err := st.Enqueue(ctx, noops(min(cfg.Batch, cfg.Tasks-done), "noop")); err != nil {
				return err
			}
		}
		r.EnqueuePerSec = float64(cfg.Tasks) / time.Since(begin).Seconds()
		return nil
	})
}

// work enqueues no-op tasks first, then times an engine working them all.
func work(ctx context.Context, open Opener, cfg Config, r *Result) error {
	return withStore(open, func(st store.Store) error {
		for done := 0; done < cfg.Tasks; done += cfg.Batch {
			if _, err := st.Enqueue(ctx, noops(min(cfg.Batch, cfg.Tasks-done), "noop")); err != nil {
				return err
			}
		}
		var finished atomic.Int64
		all := make(chan struct{})
		e, err := newEngine(cfg, st, cfg.Concurrency, func(ev engine.Event) {
			if ev.Task.State == task.Success && finished.Add(1) == int64(cfg.Tasks) {
				close(all)
			}
		})
		if err != nil {
			return err
		}
		e.Register(engine.Handler{Kind: "noop", Fn: func(context.Context, *task.Task) error { return nil }})
		begin := time.Now()
		if err := e.Start(ctx); err != nil {
			return err
		}
		defer e.Stop(ctx)
		if err := wait(ctx, all, 5*time.Minute); err != nil {
			return fmt.Errorf("%d of %d tasks done: %w", finished.Load(), cfg.Tasks, err)
		}
		r.WorkPerSec = float64(cfg.Tasks) / time.Since(begin).Seconds()
		r.ClaimBatch = float64(e.Stats().Claimed.Load()) / float64(max(e.Stats().Claims.Load(), 1))
		return nil
	})
}

func newEngine(cfg Config, st store.Store, conc int, onEvent func(engine.Event)) (*engine.Engine, error) {
	return engine.Assemble(cfg.engineConfig(st, conc, onEvent), engine.Observe{})
}

func wait(ctx context.Context, done <-chan struct{}, limit time.Duration) error {
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return errors.New("timed out")
	}
}

// lateness fails tasks once with a 50ms constant backoff, spread over
// a second, and measures how late each retry starts after it was due.
func lateness(ctx context.Context, open Opener, cfg Config, r *Result) error {
	return withStore(open, func(st store.Store) error {
		var finished atomic.Int64
		all := make(chan struct{})
		e, err := newEngine(cfg, st, 64, func(ev engine.Event) {
			if ev.Task.State == task.Success && finished.Add(1) == int64(cfg.Retries) {
				close(all)
			}
		})
		if err != nil {
			return err
		}
		e.Register(engine.Handler{Kind: "retry-once", Policy: &retry.Policy{MaxAttempts: 3, Backoff: retry.Constant{Interval: 50 * time.Millisecond}},
			Fn: func(ctx context.Context, t *task.Task) error {
				if t.Attempt == 1 {
					return retry.Transient(errors.New("once"))
				}
				return nil
			}})
		if err := e.Start(ctx); err != nil {
			return err
		}
		defer e.Stop(ctx)
		ids, err := enqueueSpread(ctx, st, cfg.Retries, time.Second)
		if err != nil {
			return err
		}
		e.Wake()
		if err := wait(ctx, all, 2*time.Minute); err != nil {
			return err
		}
		late, err := latenesses(ctx, st, ids)
		if err != nil {
			return err
		}
		r.RetryLateP50, r.RetryLateP99, r.RetryLateMax = pct(late, 50), pct(late, 99), pct(late, 100)
		return nil
	})
}

// enqueueSpread enqueues n tasks due at even intervals over d, so retries
// do not all fall due at once.
func enqueueSpread(ctx context.Context, st store.Store, n int, d time.Duration) ([]int64, error) {
	now := time.Now()
	ts := make([]task.NewTask, n)
	for i := range ts {
		ts[i] = task.NewTask{Kind: "retry-once", RunAt: now.Add(d * time.Duration(i) / time.Duration(n))}
	}
	got, err := st.Enqueue(ctx, ts)
	ids := make([]int64, len(got))
	for i, t := range got {
		ids[i] = t.ID
	}
	return ids, err
}

// latenesses is, per task, how long after its retry was due (the end of
// attempt 1 plus the chosen delay) attempt 2 started, in milliseconds.
func latenesses(ctx context.Context, st store.Store, ids []int64) ([]float64, error) {
	out := make([]float64, 0, len(ids))
	for _, id := range ids {
		as, err := st.Attempts(ctx, id)
		if err != nil {
			return nil, err
		}
		if len(as) < 2 {
			return nil, fmt.Errorf("task %d has %d attempts", id, len(as))
		}
		due := as[0].EndedAt.Add(as[0].Delay)
		out = append(out, float64(as[1].StartedAt.Sub(due))/float64(time.Millisecond))
	}
	return out, nil
}

func pct(xs []float64, p int) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	i := (len(s) - 1) * p / 100
	return s[i]
}

// execOverhead runs /bin/true as process tasks one at a time, enqueue to
// SUCCESS, against bare fork/execs of it.
func execOverhead(ctx context.Context, open Opener, cfg Config, r *Result) error {
	begin := time.Now()
	for range cfg.Procs {
		if err := exec.CommandContext(ctx, "/bin/true").Run(); err != nil {
			return err
		}
	}
	r.BareExecMS = ms(time.Since(begin)) / float64(cfg.Procs)
	return withStore(open, func(st store.Store) error {
		done := make(chan struct{}, 1)
		e, err := newEngine(cfg, st, 1, func(ev engine.Event) {
			if ev.Task.State == task.Success {
				done <- struct{}{}
			}
		})
		if err != nil {
			return err
		}
		if err := e.Start(ctx); err != nil {
			return err
		}
		defer e.Stop(ctx)
		args := []byte(`{"argv":["/bin/true"]}`)
		begin := time.Now()
		for range cfg.Procs {
			if _, err := st.Enqueue(ctx, []task.NewTask{{Kind: task.KindExec, Args: args}}); err != nil {
				return err
			}
			e.Wake()
			if err := wait(ctx, done, time.Minute); err != nil {
				return err
			}
		}
		r.ExecTaskMS = ms(time.Since(begin)) / float64(cfg.Procs)
		r.ExecOverhead = r.ExecTaskMS - r.BareExecMS
		return nil
	})
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
