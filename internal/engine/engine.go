package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grit-run/grit/fsm"
	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/internal/autotimeout"
	"github.com/grit-run/grit/internal/clock"
	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/internal/machine"
	"github.com/grit-run/grit/internal/or"
	"github.com/grit-run/grit/internal/sched"
	"github.com/grit-run/grit/internal/tracing"
	"github.com/grit-run/grit/retention"
	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Config configures an Engine. Zero fields mean the documented defaults.
type Config struct {
	Store    store.Store
	WorkerID string   // default: host-pid-random
	Version  string   // recorded on the worker
	Queues   []string // default: every queue
	// AllowExec is which process tasks (kind exec) from elsewhere the
	// engine runs: those enqueued through the API, or submitted from a
	// task file on another host (task.Origin). Empty, the default: none
	// (they fail, saying so); task.AllowAllExec: all; otherwise the commands
	// listed, each the exact first word (argv[0]) of a task without a
	// shell. Process tasks from code with the store's own credentials or
	// from a task file on this host always run.
	AllowExec []string
	// Run, if set, is the one run whose tasks the engine claims (grit run
	// works its own run, not the store's other tasks); default: any.
	Run int64
	// Concurrency bounds the attempts running at once; default 10.
	Concurrency int
	// Lease is how long a claim holds a task without a heartbeat; default
	// gate.DefaultLease.
	Lease time.Duration
	// Heartbeat is how often leases are renewed; default a third of Lease.
	Heartbeat time.Duration
	// Poll is the longest the claim loop sleeps when nothing is due and
	// nothing woke it (another process may have enqueued); default
	// gate.DefaultPoll.
	Poll time.Duration
	// StuckGrace is how long a Go handler that ignores the end of its
	// context may keep its slot; default 5s. A watchdog that looks every
	// quarter of it (at most every second) ends such an attempt within
	// StuckGrace and two of those looks.
	StuckGrace time.Duration
	// RecordTimeout bounds how long Stop keeps trying to record the last
	// results after the drain when its context has not ended, and how
	// long its last try may take once it has; default 10s.
	RecordTimeout time.Duration
	Logger        *slog.Logger
	// Clock is the engine's time: its claim loop, heartbeats, rescues,
	// watchdog, and the store's clock as the gate reads it (leases,
	// breakers, budgets); default the store's, when it lends one
	// (clock.Source), else the machine's. A test moves a clock.Fake
	// instead of sleeping. (An attempt's timeout is its context's
	// deadline, on the machine's clock.)
	Clock clock.Clock
	// OnEvent, if set, is called (from one goroutine) after each change the
	// engine makes to a task: claims and finished attempts.
	OnEvent func(Event)
	// Protection is how the engine protects the downstreams of its tasks'
	// groups: breakers, resource pressure and retry budgets.
	gate.Protection
	// Alerting is where alerts go: a task dead-lettered, a breaker opened,
	// an outage held, once the store has recorded it. Stop delivers those
	// still waiting within its context.
	alert.Alerting
	// Metrics, if set, counts the engine's attempts (through its gate, as
	// the API server counts its remote workers'), its slots and the
	// results its lost leases made stale.
	Metrics gate.Metrics
	// Tracer, if set, makes a span for each attempt (see package
	// tracing); process tasks get its context as TRACEPARENT.
	Tracer *tracing.Tracer
	// Retention is how long finished tasks and stopped workers' rows are
	// kept; the zero Policy is retention.Default(), and Off keeps them
	// all. The engine prunes (on a store that is a store.Pruner) a
	// PruneBatch at a time every PruneEvery, jittered, as every engine of
	// the fleet does, without a leader.
	Retention retention.Policy
	// PruneEvery is how often the engine prunes; default a minute.
	PruneEvery time.Duration
	// PruneBatch is how many tasks a prune round deletes at most; default
	// 1000. A round that deletes a full batch is followed by another, up
	// to ten a turn.
	PruneBatch int
	// Schedules are declared in the store when the engine starts (see
	// sched.Declare). Every engine ticks every schedule the store holds,
	// whoever declared it, each ScheduleEvery (default a second), unless
	// it works one run (Run).
	Schedules     []schedule.Schedule
	ScheduleEvery time.Duration
	// Machines are the state machines whose instances the engine moves
	// on (package fsm): it delivers their events, one at a time per
	// instance, at once when it finished the task of a state, and at each
	// ScheduleEvery for the others.
	Machines []fsm.Machine
	// AutoTimeouts is how the timeout of a task that asks for
	// task.AutoTimeout is learned from its successful runs.
	AutoTimeouts AutoTimeouts
	// Isolation is how isolated handlers' children run.
	Isolation Isolation
}

func (c *Config) validate() error {
	if c.Store == nil {
		return errors.New("engine: no store")
	}
	if c.Concurrency < 0 || c.Lease < 0 || c.Heartbeat < 0 || c.Poll < 0 || c.StuckGrace < 0 {
		return errors.New("engine: negative concurrency, lease, heartbeat, poll or grace")
	}
	if err := c.Protection.Validate(); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	if err := c.Alerting.Validate(); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	if err := c.Isolation.validate(); err != nil {
		return err
	}
	if len(c.Schedules) > 0 {
		if _, err := sched.Of(c.Store); err != nil {
			return fmt.Errorf("engine: %d schedules declared: %w", len(c.Schedules), err)
		}
		for _, s := range c.Schedules {
			if err := s.Validate(); err != nil {
				return fmt.Errorf("engine: %w", err)
			}
		}
	}
	if err := c.AutoTimeouts.Validate(); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	if len(c.Machines) > 0 {
		if _, err := machine.Of(c.Store); err != nil {
			return fmt.Errorf("engine: %d state machines: %w", len(c.Machines), err)
		}
		names := map[string]bool{}
		for _, m := range c.Machines {
			if err := m.Validate(); err != nil {
				return fmt.Errorf("engine: %w", err)
			}
			if names[m.Name] {
				return fmt.Errorf("engine: machine %q given twice", m.Name)
			}
			names[m.Name] = true
		}
	}
	if c.ScheduleEvery < 0 {
		return errors.New("engine: negative schedule tick")
	}
	if c.Heartbeat > 0 && c.Lease > 0 && c.Heartbeat >= c.Lease {
		return fmt.Errorf("engine: heartbeat %v must be shorter than the lease %v", c.Heartbeat, c.Lease)
	}
	return nil
}

func (c *Config) setDefaults() {
	if c.WorkerID == "" {
		host, _ := os.Hostname()
		c.WorkerID = fmt.Sprintf("%s-%d-%04x", host, os.Getpid(), time.Now().UnixNano()&0xffff)
	}
	c.Metrics = gate.OrNoMetrics(c.Metrics)
	c.Concurrency = or.Positive(c.Concurrency, gate.DefaultConcurrency)
	c.Lease = or.Positive(c.Lease, gate.DefaultLease)
	c.Heartbeat = or.Positive(c.Heartbeat, gate.Heartbeat(c.Lease))
	c.Poll = or.Positive(c.Poll, gate.DefaultPoll)
	c.Retention = c.Retention.OrDefault()
	c.PruneEvery = or.Positive(c.PruneEvery, time.Minute)
	c.PruneBatch = or.Positive(c.PruneBatch, 1000)
	c.ScheduleEvery = or.Positive(c.ScheduleEvery, time.Second)
	c.StuckGrace = or.Positive(c.StuckGrace, 5*time.Second)
	c.RecordTimeout = or.Positive(c.RecordTimeout, 10*time.Second)
	c.Protection = c.Protection.WithDefaults()
	c.AutoTimeouts = c.AutoTimeouts.WithDefaults()
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if s, ok := c.Store.(clock.Source); ok && c.Clock == nil {
		c.Clock = s.Clock()
	}
	c.Clock = clock.Or(c.Clock)
}

// Event is one change the engine made to a task.
type Event struct {
	Time    time.Time
	Task    task.Task    // the task as it is after the change
	Attempt task.Attempt // the attempt that ended (zero for a claim)
}

// Engine claims and works tasks.
type Engine struct {
	cfg      Config
	handlers map[string]*Handler
	kinds    []string

	wake     chan struct{}
	slots    chan struct{}
	finishes chan pending
	events   chan Event

	mu      sync.Mutex
	running map[int64]*inflight

	started     atomic.Bool
	stopped     atomic.Bool
	stopping    chan struct{}
	runCtx      context.Context // ends when the engine has stopped
	cancel      context.CancelFunc
	completeCtx context.Context // ends when Stop gives up recording results
	abandon     context.CancelFunc
	lastTry     chan struct{} // closed when Stop makes its last try to record results
	lastOnce    sync.Once
	rec         completion   // the completer's own
	held        atomic.Int64 // results held apart, not recorded yet (freeSlots)
	claimWG     sync.WaitGroup
	completerWG sync.WaitGroup
	leaseWG     sync.WaitGroup
	eventWG     sync.WaitGroup
	execs       sync.WaitGroup
	done        chan struct{}

	// slotBound is set while the claim loop is held back by the slots
	// (none free, or its last claim filled them all): a freed slot wakes it.
	slotBound atomic.Bool
	gate      *gate.Gate // the downstream protection, and the rescue of expired leases
	alerts    *alert.Alerter
	pokes     chan machine.Poke // instances whose state's task this engine finished

	stats Stats

	executors executors
	cancels   cancelled // the tasks whose cancel the store announced
	// runWait says how starved of CPU the process was since it was last
	// called (runWaits); only the heartbeat loop calls it.
	runWait  func() time.Duration
	confirms *confirmQueue      // leases to renew before a process starts (confirmLoop)
	auto     *autotimeout.Cache // the p99s behind auto timeouts

	watch struct { // the attempts whose handler runs, for the watchdog
		sync.Mutex
		running map[*inflight]struct{}
	}

	children *childPool // isolated handlers' children; nil until one registers
	child    *childSide // set in an isolated handler's child (NewChild)
}

// Stats counts what the engine saw.
type Stats struct {
	Claims, Claimed, Finished, LeaseLost, Stuck, Rescued atomic.Int64
	BudgetDeferred                                       atomic.Int64 // claims given back: their group's retry budget was spent, or it was at its limit
	PauseDeferred                                        atomic.Int64 // claims given back unstarted: their queue, kind or tenant was paused since
	PollErrors                                           atomic.Int64 // consecutive failed claims
	ChildStarts                                          atomic.Int64 // isolated handlers' children started and ready
	lastErr                                              atomic.Value // string
}

// LastPollError returns the last claim error and how many claims in a row
// have failed.
func (s *Stats) LastPollError() (string, int64) {
	v, _ := s.lastErr.Load().(string)
	return v, s.PollErrors.Load()
}

// New returns an engine with the process-task handler ("exec") registered.
func New(cfg Config) (*Engine, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	e := &Engine{
		cfg:      cfg,
		handlers: map[string]*Handler{},
		wake:     make(chan struct{}, 1),
		slots:    make(chan struct{}, cfg.Concurrency),
		finishes: make(chan pending, cfg.Concurrency),
		events:   make(chan Event, 256),
		running:  map[int64]*inflight{},
		stopping: make(chan struct{}),
		lastTry:  make(chan struct{}),
		done:     make(chan struct{}),
		pokes:    make(chan machine.Poke, 256),
		confirms: newConfirmQueue(),
		runWait:  newRunWaits().since,
	}
	e.alerts = alert.New(cfg.Alerting, cfg.Logger, cfg.Metrics.AlertsDropped)
	g, err := gate.New(gate.Config{Store: cfg.Store, Protection: cfg.Protection, Policy: e.policyFor, Decided: e.withCatch, Clock: cfg.Clock, Logger: cfg.Logger, OnChange: e.Wake, Alert: e.alerts.Send, Metrics: cfg.Metrics})
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	e.gate = g
	e.auto = autotimeout.NewCache(cfg.Store, cfg.AutoTimeouts, cfg.Clock.Now)
	e.watch.running = map[*inflight]struct{}{}
	if err := e.Register(Handler{Kind: task.KindExec, Fn: e.runExec}); err != nil {
		return nil, err
	}
	return e, nil
}

// Register adds a handler; it must be called before Start.
func (e *Engine) Register(h Handler) error {
	if e.started.Load() {
		return fmt.Errorf("engine: register %q after start", h.Kind)
	}
	if err := h.validate(); err != nil {
		return err
	}
	if _, dup := e.handlers[h.Kind]; !dup {
		e.kinds = append(e.kinds, h.Kind)
	}
	if e.cfg.Isolation.All && h.Kind != task.KindExec {
		h.Isolate = true
	}
	e.handlers[h.Kind] = &h
	if h.Isolate && e.children == nil && e.child == nil {
		e.children = newChildPool(e, e.cfg.Isolation)
	}
	return nil
}

// Store returns the engine's store: nil in an isolated handler's child
// (NewChild), which has none.
func (e *Engine) Store() store.Store { return e.cfg.Store }

// WorkerID returns the worker's identity in the store.
func (e *Engine) WorkerID() string { return e.cfg.WorkerID }

// Stats returns the engine's counters.
func (e *Engine) Stats() *Stats { return &e.stats }

// Wake tells the claim loop that work may be due (a task was enqueued in
// this process).
func (e *Engine) Wake() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}
