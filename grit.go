package grit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/grit-run/grit/fsm"
	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/internal/tracing"
	"github.com/grit-run/grit/internal/version"
	"github.com/grit-run/grit/retention"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/store"
	_ "github.com/grit-run/grit/store/sqlite" // the embedded default
	"github.com/grit-run/grit/task"
)

// Config configures a Client. Zero fields mean the defaults.
type Config struct {
	// Queues the worker claims from; default every queue.
	Queues []string
	// AllowExec is which process tasks (kind exec) enqueued through the
	// API, or from a task file on another host, the worker runs: none by
	// default (they fail, saying so); task.AllowAllExec ("*") for all; or the commands listed
	// (a task's exact argv[0], without a shell). Process tasks enqueued by
	// code with the store, or from a task file on this host, always run.
	AllowExec []string
	// Concurrency bounds the attempts running at once; default
	// DefaultConcurrency.
	Concurrency int
	// Lease is how long a worker holds a task without heartbeating; default
	// DefaultLease, renewed every Heartbeat (default a third of it).
	Lease, Heartbeat time.Duration
	// WorkerID names the worker in the store; default host-pid-random.
	WorkerID string
	Logger   *slog.Logger
	// Protection is how the worker protects the downstreams its handlers'
	// groups name (HandlerConfig.Group), with state kept in the store and
	// shared by every worker on it: circuit breakers, resource pressure
	// (a retry.Resource failure holds the group back, growing) and retry
	// budgets (a group's retries, fleet-wide, at most a share of its first
	// attempts). Zero fields mean the defaults.
	Protection
	// Alerting is where the worker's alerts go, once the store has
	// recorded what each is about: a task dead-lettered, a group's breaker
	// opened, a kind or group held as an outage. OnAlert is called with
	// each, one at a time, on a goroutine of its own (a slow callback
	// delays the alerts, never the worker); AlertWebhook is POSTed each
	// as JSON (docs/alerts.md). Stop delivers those still waiting within
	// its context.
	Alerting
	// Metrics, if set, is what the client counts into: its attempts by
	// outcome and class, their durations, the tasks it enqueues, its
	// slots. For Prometheus, pass metrics.New(registry): the client then
	// also registers the store's gauges there (tasks by queue and state,
	// the oldest due task's age, the groups' breakers, budgets and outage
	// holds), read when scraped. Serve them with metrics.Handler;
	// docs/observability.md lists them. Several clients may share one.
	// Nil: no metrics.
	Metrics Metrics
	// TracerProvider, if set, makes the client's OpenTelemetry spans: one
	// when a task is enqueued, whose context the store keeps with the
	// task, and one for each attempt, linked to it and to the attempt
	// before (docs/observability.md). Nil: no spans, at no cost. To use
	// the application's own, pass otel.GetTracerProvider(); for the one
	// the standard OTEL_* variables configure (an OTLP exporter, as the
	// grit command uses), otelenv.FromEnv.
	TracerProvider trace.TracerProvider
	// Retention is how long finished tasks (with their attempts, and a
	// run with its last task) and stopped workers' rows are kept before
	// the client prunes them, as every worker of the fleet does, a batch
	// at a time: the zero Policy is retention.Default() (SUCCESS and
	// CANCELLED a day, FAILED, UPSTREAM_FAILED and SKIPPED a week, dead
	// letters until an operator acts); Off keeps everything
	// (docs/retention.md).
	Retention retention.Policy
	// Schedules are periodic tasks, declared in the store when the client
	// starts (docs/schedules.md): a task of a kind on a cron expression
	// or at an interval, in a time zone, one task per slot across the
	// fleet. Every started client (and grit worker) ticks every schedule
	// the store holds, whoever declared it; a restart keeps each one's
	// last slot and an operator's pause.
	Schedules []schedule.Schedule
	// Machines are the state machines this client's worker moves on
	// (docs/fsm.md): the handlers of their states' kinds are registered
	// with Handle, as any; an event sent (Send) to an instance is
	// delivered one at a time, in order.
	Machines []fsm.Machine
	// AutoTimeouts is how the timeout of a task that asks for AutoTimeout
	// is learned: 5 × the p99 of its successful runs, within 1m and 1h,
	// once 20 are on record, 30m before (docs/timeouts.md).
	// Zero fields mean those defaults.
	AutoTimeouts AutoTimeouts
	// StuckGrace is how long a Go handler that ignores the end of its
	// context (its timeout, a cancel, a lost lease) has to return before
	// its slot is freed and its attempt ends as stuck (its goroutine is
	// left to end when it will); default 5s. An isolated handler's
	// process is killed instead (docs/engine.md).
	StuckGrace time.Duration
	// Isolation is how isolated handlers' child processes run: their
	// command (this program, by default), a memory limit, how many
	// attempts each works before it is replaced, and whether every
	// handler is isolated (All) or only those that ask
	// (HandlerConfig.Isolate) (docs/engine.md).
	Isolation Isolation
}

// The defaults of Config.
const (
	DefaultLease       = gate.DefaultLease       // Config.Lease: 15s
	DefaultConcurrency = gate.DefaultConcurrency // Config.Concurrency: 10
)

// IsChild reports whether this process is an isolated handler's child:
// this program started again by its worker to run attempts. In a child,
// Open and New make a client without a store that only registers
// handlers, and Start serves the worker and never returns; what main does
// besides opening the client, registering handlers and starting it must
// be guarded by IsChild (docs/engine.md).
func IsChild() bool { return engine.IsChild() }

// AutoTimeout, as HandlerConfig.Timeout or WithTimeout's, asks for a
// timeout learned from the task's successful runs (see AutoTimeouts): one
// that follows the work as it slows down, instead of a fixed one that
// turns a slow night into timeouts and dead letters.
const AutoTimeout = task.AutoTimeout

// Client enqueues tasks and, once started, works them.
type Client struct {
	store    store.Store
	engine   *engine.Engine
	metrics  Metrics         // never nil
	tracer   *tracing.Tracer // nil: none
	owned    bool
	mu       sync.RWMutex
	groups   map[string]string      // the group of each kind whose handler names one
	machines map[string]fsm.Machine // Config.Machines, by name
}

// Open opens the store a DSN names ("sqlite:grit.db"; other drivers must
// be imported) and returns a client on it. Close closes the store.
func Open(ctx context.Context, dsn string, cfg Config) (*Client, error) {
	if IsChild() {
		return newChild(cfg)
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	c, err := New(st, cfg)
	if err != nil {
		st.Close()
		return nil, err
	}
	c.owned = true
	return c, nil
}

// New returns a client on an open store, which the caller closes.
func New(st Driver, cfg Config) (*Client, error) {
	if IsChild() {
		return newChild(cfg)
	}
	e, err := engine.Assemble(engine.Config{
		Store: st, Queues: cfg.Queues, AllowExec: cfg.AllowExec, Concurrency: cfg.Concurrency, Lease: cfg.Lease,
		Heartbeat: cfg.Heartbeat, WorkerID: cfg.WorkerID, Logger: cfg.Logger, Version: Version(), Protection: cfg.Protection.gate(),
		Alerting: cfg.Alerting.alert(), Retention: cfg.Retention, Schedules: cfg.Schedules, Machines: cfg.Machines,
		AutoTimeouts: engine.AutoTimeouts(cfg.AutoTimeouts), StuckGrace: cfg.StuckGrace, Isolation: engine.Isolation(cfg.Isolation),
	}, engine.Observe{Metrics: cfg.Metrics, TracerProvider: cfg.TracerProvider})
	if err != nil {
		return nil, fmt.Errorf("grit: %w", err)
	}
	machines := map[string]fsm.Machine{}
	for _, mc := range cfg.Machines {
		machines[mc.Name] = mc
	}
	return &Client{store: st, engine: e, metrics: e.Metrics(), tracer: e.Tracer(), groups: map[string]string{}, machines: machines}, nil
}

// newChild is the client of an isolated handler's child: handlers
// register on it and Start serves the worker. It has no store (nil):
// what needs one answers engine.ErrChild (Client.driver).
func newChild(cfg Config) (*Client, error) {
	e, err := engine.NewChild(engine.Config{Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("grit: %w", err)
	}
	return &Client{engine: e, metrics: e.Metrics(),
		groups: map[string]string{}, machines: map[string]fsm.Machine{}}, nil
}

// Version is grit's version, as the go command recorded it in the binary:
// a tag such as v1.2.0, a pseudo-version, or "(devel)", with the commit
// when grit is built from its own checkout. Workers record it.
func Version() string { return version.Get().String() }

// A Driver is a store opened by a driver package (sqlite.Open,
// postgres.Open, or postgres.New on a pool of your own): New runs a client
// on it. Its methods are the drivers' contract (package store): a user
// reaches the store through the Client's methods instead.
type Driver interface {
	store.Store
}

// HandlerConfig configures the tasks of one kind.
type HandlerConfig struct {
	// Policy is a retry policy string ("4 1s 1m", see retry.Parse); ""
	// means retry.CommonFourTimes. RetryPolicy, when set, wins over it.
	// "3 1s 30s explicit_only" retries only errors marked retryable
	// (retry.Transient, or wrapping retry.ErrTransient…), and
	// "5 1s 1m transient=20,2s,5m" gives transient failures their own
	// schedule.
	Policy      string
	RetryPolicy *retry.Policy
	// Timeout bounds each attempt; 0 is no bound, AutoTimeout one learned
	// from the kind's successful runs.
	Timeout time.Duration
	// Group names the downstream the tasks call: the tasks of this kind
	// that this client enqueues are in it, unless they name another
	// (InGroup). A group's tasks share its circuit breaker and pressure.
	Group string
	// Catch, if set, is a kind: when a task of this kind ends FAILED
	// (its retries ran out, or its failure was permanent), a task of kind
	// Catch is enqueued, exactly once, with a task.Caught as its args
	// (docs/directives.md). A DEAD_LETTER is not caught.
	Catch string
	// Isolate runs the handler's attempts in child processes, this
	// program started again (IsChild): a handler that hangs past its
	// timeout is killed with its process (SIGTERM, the task's grace,
	// SIGKILL), and one that panics on a goroutine of its own, calls
	// os.Exit or runs out of memory ends its own attempt, not the
	// worker. It costs a round trip to the child per attempt
	// (docs/engine.md).
	Isolate bool
	// MaxSnoozes bounds how many times a task of this kind may snooze
	// (Snooze): asked for once more, the snooze fails the task (FAILED,
	// with an error that says so) instead of waiting on. 0 is no bound.
	// A process task's max_snoozes is the same bound (docs/taskfile.md).
	MaxSnoozes int
	// Quarantine is what the handler does with the items it sets aside
	// with Quarantine: the kind a replay runs each as, and how many it
	// tolerates. Zero: the items cannot be replayed (only dropped) and
	// any number is tolerated.
	Quarantine QuarantinePolicy
}

// Handle registers fn for tasks of kind. Each task's args are decoded from
// JSON into an A; args that do not decode fail the task at once.
func Handle[A any](c *Client, kind string, fn func(ctx context.Context, args A) error, cfg HandlerConfig) error {
	p, err := cfg.policy()
	if err != nil {
		return fmt.Errorf("grit: handler %q: %w", kind, err)
	}
	if cfg.Group != "" {
		c.mu.Lock()
		c.groups[kind] = cfg.Group
		c.mu.Unlock()
	}
	return c.engine.Register(engine.Handler{
		Kind: kind, Policy: p, Timeout: cfg.Timeout, Group: cfg.Group, Catch: cfg.Catch, Isolate: cfg.Isolate, MaxSnoozes: cfg.MaxSnoozes,
		Quarantine: engine.QuarantinePolicy(cfg.Quarantine),
		Fn: func(ctx context.Context, t *task.Task) error {
			var args A
			if len(t.Args) > 0 {
				if err := json.Unmarshal(t.Args, &args); err != nil {
					return retry.Permanent(fmt.Errorf("task %d (%s): args %s do not decode: %w", t.ID, kind, t.Args, err))
				}
			}
			return fn(ctx, args)
		},
	})
}

func (cfg HandlerConfig) policy() (*retry.Policy, error) {
	if cfg.RetryPolicy != nil {
		return cfg.RetryPolicy, nil
	}
	if cfg.Policy == "" {
		return nil, nil
	}
	p, err := retry.Parse(cfg.Policy)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// Start starts working tasks.
func (c *Client) Start(ctx context.Context) error { return c.engine.Start(ctx) }

// Stop stops claiming, lets running attempts finish until ctx ends, and
// gives back what is left without using an attempt. It returns when ctx
// ends, whatever is still unrecorded: a result the store has not taken
// by then gets one last try and is otherwise abandoned (its lease lapses
// and the rescue decides); the error then names those tasks and wraps
// ctx's error (docs/engine.md, "When a result cannot be recorded").
func (c *Client) Stop(ctx context.Context) error { return c.engine.Stop(ctx) }

// Close closes the store if Open opened it. (A TracerProvider given in
// Config is the caller's to shut down.)
func (c *Client) Close() error {
	if c.owned && c.store != nil {
		return c.store.Close()
	}
	return nil
}

// Snooze, returned by a handler, tries the task again after d without using
// an attempt: a sensor whose condition does not hold yet. The task counts
// its snoozes (task.Task.Snoozes); HandlerConfig.MaxSnoozes bounds them.
func Snooze(d time.Duration) error { return engine.Snooze(d) }

// ErrDuplicate is returned with the existing run when a run's key was
// used before.
var ErrDuplicate = task.ErrDuplicate

// ErrKeyConflict: an idempotency key is already taken by other work
// (another kind or other args); errors.As finds the *task.KeyConflictError
// with the task that holds it.
var ErrKeyConflict = task.ErrKeyConflict

var errNoKind = errors.New("grit: enqueue without a kind")
