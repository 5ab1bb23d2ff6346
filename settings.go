package grit

import (
	"context"
	"io"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/store"
)

// Protection is how a worker protects the downstreams its tasks call: the
// groups' circuit breakers, resource pressure and retry budgets, with
// state kept in the store and shared by every worker on it. Zero fields
// mean the defaults.
type Protection struct {
	// Breaker configures the groups' circuit breakers; a group's own
	// settings (grit breakers set) replace them. Zero fields mean
	// package breaker's defaults.
	Breaker breaker.Settings
	// A resource failure (retry.Resource) holds its whole group back for
	// PressureBase, each further one for twice as long, up to
	// PressureMax; each success eases it a step. Default 1s and 1m.
	PressureBase, PressureMax time.Duration
	// RetryBudget bounds each group's retries, fleet-wide, to a share of
	// its first attempts plus a floor; a retry past it waits BudgetWait,
	// using no attempt. Zero rates mean DefaultBudget; the wait defaults
	// to 1s.
	RetryBudget BudgetRates
	BudgetWait  time.Duration
	// OutageTasks and OutageWindow tell an outage from poison: a failure
	// that would dead-letter its task as poison is an outage instead when
	// OutageTasks distinct tasks of its group (or, without one, of its
	// kind) failed with the same fingerprint within OutageWindow and none
	// of them succeeded. Then the task is retried and the group or kind is
	// held, as an open breaker holds a group, until a probe succeeds.
	// Default 5 tasks and 1m; a negative OutageTasks turns it off.
	OutageTasks  int
	OutageWindow time.Duration
}

// BudgetRates are a group's retry budget: a retry takes a token; each
// first attempt adds Ratio of one, and Floor are added a second, up to
// Burst held at once.
type BudgetRates struct {
	Ratio, Floor, Burst float64
}

// DefaultBudget is 20% of first attempts, one retry a second, up to 10
// at once.
var DefaultBudget = BudgetRates(store.DefaultBudget)

// gate is p as the claimers' rules take it.
func (p Protection) gate() gate.Protection {
	return gate.Protection{
		Breaker: p.Breaker, PressureBase: p.PressureBase, PressureMax: p.PressureMax,
		RetryBudget: store.BudgetRates(p.RetryBudget), BudgetWait: p.BudgetWait,
		OutageTasks: p.OutageTasks, OutageWindow: p.OutageWindow,
	}
}

// Alerting is where a worker's alerts go. The zero value sends none.
type Alerting struct {
	// OnAlert, if set, is called with each alert, one at a time, on a
	// goroutine of its own: a slow callback delays the alerts after it,
	// never the worker. Alerts wait for it in a bounded queue; past it
	// the oldest waiting is dropped, and the drops logged.
	OnAlert func(Alert)
	// AlertWebhook, if set, is an http or https URL each alert is POSTed
	// to as JSON (docs/alerts.md), retried with jittered backoff on a
	// network failure, a 5xx, a 408 or a 429; any other 4xx is not
	// retried. The alerts wait in a queue of their own, as for OnAlert.
	AlertWebhook string
	// DashboardURL, if set, is the base URL of grit's dashboard (grit
	// server --http, grit dashboard): an alert's Link is its page rather
	// than a grit command.
	DashboardURL string
}

// alert is a as the claimers' alerter takes it.
func (a Alerting) alert() alert.Alerting {
	out := alert.Alerting{AlertWebhook: a.AlertWebhook, DashboardURL: a.DashboardURL}
	if fn := a.OnAlert; fn != nil {
		out.OnAlert = func(e alert.Event) { fn(alertOf(e)) }
	}
	return out
}

// AlertType is what an alert is about.
type AlertType string

// The alerts' types, as the webhook's JSON spells them.
const (
	AlertDeadLetter     = AlertType(alert.DeadLetter)       // a task is DEAD_LETTER: the same failure twice in a row
	AlertBreakerOpened  = AlertType(alert.BreakerOpened)    // a group's circuit breaker opened
	AlertOutageHeld     = AlertType(alert.OutageHeld)       // a kind or group is held as an outage
	AlertSchedulePaused = AlertType(alert.SchedulePaused)   // a schedule paused itself after failed slots
	AlertQuarantined    = AlertType(alert.QuarantinedItems) // an attempt set items aside (Quarantine); Tasks counts them
)

// Alert is one alert: what it is about (Type), when, and the task, group
// or kind it concerns, with a line for a human (Summary) and where an
// operator looks next (Link). The fields that do not apply to its Type are
// zero.
type Alert struct {
	Type AlertType
	Time time.Time
	// The task, for a dead letter: its id, kind, queue, group, tenant,
	// run (0: none) and the attempts it used.
	TaskID                     int64
	Kind, Queue, Group, Tenant string
	RunID                      int64
	Attempt                    int
	// Fingerprint and Error are the failure's (a dead letter's, an
	// outage's); Error is at most 2 KiB.
	Fingerprint, Error string
	// Until is when an opened breaker lets a probe through, or when an
	// outage's hold ends; zero when unknown.
	Until time.Time
	// Tasks is how many distinct tasks failed alike, for an outage; how
	// many slots in a row failed, for a schedule that paused itself.
	Tasks int
	// Schedule is the schedule that paused itself.
	Schedule string
	// Summary says what happened in a line, for a human.
	Summary string
	// Link is where an operator looks next: a grit command ("grit task
	// 42"), or a URL under Alerting.DashboardURL when one is set.
	Link string
}

func alertOf(e alert.Event) Alert {
	return Alert{
		Type: AlertType(e.Type), Time: e.Time, TaskID: e.TaskID, Kind: e.Kind, Queue: e.Queue, Group: e.Group,
		Tenant: e.Tenant, RunID: e.RunID, Attempt: e.Attempt, Fingerprint: e.Fingerprint, Error: e.Error,
		Until: e.Until, Tasks: e.Tasks, Schedule: e.Schedule, Summary: e.Summary, Link: e.Link,
	}
}

// Isolation is how isolated handlers' child processes run
// (Config.Isolation, HandlerConfig.Isolate).
type Isolation struct {
	// All isolates every handler registered, as HandlerConfig.Isolate
	// does one.
	All bool
	// Command is a child's program and arguments. Default: this program
	// (os.Executable) with this process's arguments, which must reach
	// the registration of the same handlers and Start.
	Command []string
	// MemoryLimit, when positive, is the most resident memory a child may
	// hold, in bytes: one over it is killed (SIGKILL), its attempt fails
	// saying so, and another takes its place.
	MemoryLimit int64
	// MaxAttempts, when positive, retires a child after that many
	// attempts, so that what a handler leaks is given back.
	MaxAttempts int
	// Warm is how many children Start starts ahead of work (at most
	// Concurrency), so that the first isolated attempts do not wait for a
	// child's start; Start returns once they are ready, and fails if one
	// cannot start, saying why. 0: each starts when an attempt first
	// needs it; the pool then keeps it.
	Warm int
	// StartTimeout bounds a child's start, until it is ready for work;
	// default 30s.
	StartTimeout time.Duration
	// Stderr receives the children's standard output and error (besides
	// the tail kept to say how one died); nil is this process's standard
	// error.
	Stderr io.Writer
}

// AutoTimeouts is how the timeout of a task that asks for AutoTimeout is
// chosen: Factor × the p99 of the task's successful runs (of its kind, and
// its name when it has one), within Floor and Ceiling, once MinRuns runs
// are on record; Default before. Zero fields mean the defaults
// (docs/timeouts.md).
type AutoTimeouts struct {
	Factor  float64       // the multiple of the p99; default 5
	Floor   time.Duration // the least auto timeout; default 1m
	Ceiling time.Duration // the most; default 1h
	MinRuns int           // the successful runs needed before the p99 is used; default 20
	Default time.Duration // the timeout before; default 30m
	// Refresh is how long a task's p99 is kept before the store is asked
	// again: at most one query per kind (and name) per Refresh; default
	// 1m.
	Refresh time.Duration
}

// Attempt is what a handler's context carries about its attempt
// (AttemptFrom).
type Attempt struct {
	TaskID     int64
	Number     int   // from 1
	LeaseToken int64 // a fencing token: unique in the store, larger for every new owner of a task
	Worker     string
	// Timeout is the attempt's (0: none), and TimeoutSource where it came
	// from: "task", "handler" or how an auto timeout was chosen.
	Timeout       time.Duration
	TimeoutSource string
	// Snoozes is how many times the task snoozed before (Snooze): a
	// sensor's attempt number stays the same, and this counts its looks.
	Snoozes int
}

// AttemptFrom returns the attempt a handler's context belongs to.
func AttemptFrom(ctx context.Context) (Attempt, bool) {
	a, ok := engine.AttemptFrom(ctx)
	return Attempt(a), ok
}
