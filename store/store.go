// Package store is the contract a database driver implements for grit:
// the Store interface and its optional capabilities. It is implemented by
// drivers (store/sqlite, store/postgres) and used by the engine, the API
// server and the operators' tools; users need not import it: what they
// write and read is in package task, and they reach it through package
// grit's Client. Drivers never import the engine; the conformance suite
// store/storetest checks that a driver keeps the contract.
//
// Store embeds the capabilities the engine's and the API server's
// promises rest on: GroupBreakers, Limiter, Publisher, Durations,
// Spreader, Stepper, Pruner and Quarantiner. Each stays a small interface
// of its own, so that code can ask for just one; a driver without one does not
// compile (each driver says var _ store.Store = (*Store)(nil)), rather
// than run without the protection it gives.
//
// The optional capabilities are Waker, CancelWatcher, Advisor, Overview,
// PollReporter, Backlog, Enqueues, Console, Auditor, Pauser, PauseWatcher,
// Scheduler, Machines, InTx, Mailbox, Awaiter, Connector, Weigher and
// Replicated: small interfaces beside Store,
// found by type assertion, that
// a driver may lack with every promise still kept (Optional says what
// each gives and what is lost without it). A worker logs, when it
// starts, which its store lacks (MissingOptional). A store that wraps
// another by embedding the Store interface passes the required
// capabilities on, and hides the optional ones: it must implement those
// it means to keep.
//
// Every change of a task's state is a compare-and-set: a claim takes only a
// task that is due, and a Finish applies only if the task is still RUNNING
// under the lease token of the attempt that reports. Every change of
// ownership (claim, rescue, release) gives the task a new, larger lease
// token, so a worker that lost its lease cannot write any more.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/grit-run/grit/task"
)

// Store is a driver's whole contract.
type Store interface {
	// SubmitRun inserts a run, its tasks and their needs edges in one
	// transaction. Tasks that need nothing are READY; the others PENDING.
	// A run whose Key matches an existing run is not inserted again: the
	// existing run is returned with ErrDuplicate.
	SubmitRun(ctx context.Context, r task.NewRun) (task.Run, error)
	// Enqueue inserts tasks outside any run, in one transaction. A task
	// whose IdempotencyKey is taken (before the call, or by an earlier
	// task of the call) is not inserted again: the task holding the key is
	// answered in its place, Existed, when it is the same work or the
	// NewTask says ReturnExisting (KeyConflict); otherwise the call fails
	// with a *task.KeyConflictError and inserts nothing.
	Enqueue(ctx context.Context, ts []task.NewTask) ([]task.Enqueued, error)

	// Claim takes up to Limit due tasks for a worker: READY, RETRYING or
	// SENSING tasks whose NextAt has passed, in the given queues and kinds,
	// highest priority first, then in fair turns across tenants: a tenant's
	// tasks of one queue and priority are stamped when they come due, one
	// step (1 ÷ its weight, Weigher) after its last still waiting, or after
	// the last claimed there when it has none, and claims go by stamp (so
	// one tenant's tasks, due in turn, go in due order, then oldest first).
	// A run's tasks (Run) go by priority, then earliest due, then oldest.
	// Each claimed task becomes RUNNING with a new lease token, its attempt count goes up
	// by one before any work starts, and an attempt record is opened.
	Claim(ctx context.Context, req ClaimRequest) ([]task.Task, error)
	// Finish ends attempts in one transaction. Each item applies only if its
	// task is RUNNING under its Token; otherwise its entry in the returned
	// slice is task.ErrLeaseLost and nothing of it is written. It moves the
	// dependents of a task that ended: PENDING tasks whose needs are all
	// satisfied become READY; the dependents of a FAILED task become
	// UPSTREAM_FAILED, transitively. When a run's FAILED tasks pass its
	// MaxFailures (if set), the run is FAILED and its tasks that have not
	// started are CANCELLED. When every task of a run has ended, the run
	// ends: SUCCESS if every task succeeded or was skipped, FAILED
	// otherwise. An item the database refuses for what it would write (a
	// trigger, a constraint) gets task.ErrRefused and writes nothing, and
	// the others are written (Isolate finds it). The error is for the
	// batch as a whole, and then nothing was written: the store is down,
	// or fails every item alike.
	Finish(ctx context.Context, fs []Finish) ([]error, error)
	// Heartbeat renews, in one statement, the leases of every RUNNING task
	// the worker holds, records the worker as seen, and returns the held
	// leases it did not find any more (taken over, released or finished by
	// someone else).
	Heartbeat(ctx context.Context, worker string, lease time.Duration, held []Lease) (lost []Lease, err error)
	// Rescue takes over RUNNING tasks whose lease has expired, or every
	// RUNNING task of Owner when Owner is set (a dead worker known to be
	// dead): each gets a new lease token held by the rescuer, and its open
	// attempt is closed as INTERRUPTED. The rescuer then decides what
	// happens to each with Finish. Workers silent past their lease are
	// marked inactive.
	Rescue(ctx context.Context, req RescueRequest) ([]task.Task, error)
	// NextDue returns the earliest NextAt among the waiting tasks a Claim
	// with req would consider (its Queues, Kinds and SkipGroups), so a
	// worker can sleep exactly until then; with req.DueBefore set, only
	// among those due by then.
	NextDue(ctx context.Context, req ClaimRequest) (time.Time, bool, error)

	GetTask(ctx context.Context, id int64) (task.Task, error)
	ListTasks(ctx context.Context, f task.Filter) ([]task.Task, error)
	Attempts(ctx context.Context, taskID int64) ([]task.Attempt, error)
	GetRun(ctx context.Context, id int64) (task.Run, error)
	// FindRun returns the newest run with this key.
	FindRun(ctx context.Context, key string) (task.Run, error)
	// Edges returns a run's dependency edges.
	Edges(ctx context.Context, runID int64) ([]task.Edge, error)
	// Redrive resumes, in one transaction, a run that ended without
	// succeeding (FAILED or CANCELLED): its FAILED, DEAD_LETTER and
	// UPSTREAM_FAILED tasks, and the tasks the run cancelled itself
	// (when more of its tasks had failed than its MaxFailures), go back
	// to waiting with fresh attempts (attempt, streak, deferrals and
	// snoozes at 0, no first start): READY now when nothing they need is
	// unsatisfied, else PENDING until it is, as a run's tasks wait when
	// it is submitted. Tasks that succeeded or were skipped are not
	// touched; tasks an operator cancelled stay CANCELLED, and so do the
	// redriven tasks that need them. The run is RUNNING again, with no
	// FinishedAt, and ends as Finish ends runs. A run that has not
	// ended, that succeeded, or that has nothing to redrive is refused
	// with RedriveRefusal's error and left as it was; a missing run is
	// task.ErrNotFound.
	Redrive(ctx context.Context, runID int64) (task.Redriven, error)

	// Act applies an operator's action to a task (replay, skip or fail a
	// dead letter; cancel a task that has not ended), with the same
	// propagation as Finish.
	Act(ctx context.Context, id int64, a task.Action) (task.Task, error)

	RegisterWorker(ctx context.Context, w task.Worker) error
	DeactivateWorker(ctx context.Context, id string) error
	Workers(ctx context.Context) ([]task.Worker, error)

	// Now is the store's clock: leases and due times are measured on it.
	Now(ctx context.Context) (time.Time, error)
	Close() error

	// The capabilities the engine's and the API server's promises rest
	// on, each with what would break without it.

	// GroupBreakers: workers would call a failing downstream with no
	// breaker, retry budget or group limit.
	GroupBreakers
	// Limiter: workers would run past every queue and tenant limit, and
	// call past every rate.
	Limiter
	// Publisher: a handler's events could not commit with its success.
	Publisher
	// Durations: a task that keeps timing out would be reported without
	// the p99 that tells whether its timeout is the bug, and an
	// AutoTimeout would never be learned.
	Durations
	// Spreader: an outage (one failure on many tasks) would be taken for
	// poison, and every task it touched dead-lettered.
	Spreader
	// Stepper: grit.Step would fail its task, at run time, permanently.
	Stepper
	// Pruner: retention is on by default; without it finished tasks
	// would be kept forever, and the store grow for as long as it runs.
	Pruner
	// Quarantiner: a handler's one bad row would fail the task that
	// carries many good ones (grit.Quarantine would fail it).
	Quarantiner
}

// ClaimRequest asks for due tasks.
type ClaimRequest struct {
	Worker string
	Queues []string // empty: every queue
	Kinds  []string // empty: every kind
	// SkipGroups are groups whose tasks are not to be taken (their breaker
	// is open); Group, if set, is the one group whose tasks are (a probe).
	SkipGroups []string
	Group      string
	// SkipQueues and SkipTenants are queues and tenants whose tasks are
	// not to be taken (at their limit of running attempts); Tenant, if
	// set, is the one tenant whose tasks are.
	SkipQueues  []string
	SkipTenants []string
	Tenant      string
	// Run, if set, is the one run whose tasks are taken: a process working
	// its own run (grit run) leaves the store's other tasks to workers.
	Run   int64
	Limit int
	Lease time.Duration // 0: DefaultLease
	// DueBefore, if set, bounds NextDue to the tasks due at or before
	// it, on the store's clock: a caller that sleeps no longer than until
	// then needs no later time, and the look then never reads the tasks
	// due later (a backlog scheduled for an hour, a million retries
	// waiting out their backoff), which, when they are of kinds or queues
	// the request leaves out, it would read all of. Claim ignores it.
	DueBefore time.Time
}

// DefaultLease is how long a claim holds a task without a heartbeat: the
// lease of a Claim, Heartbeat or Rescue that asks for none, and the
// engine's and the API server's default (grit.DefaultLease).
const DefaultLease = 15 * time.Second

// Lease names one held task.
type Lease struct {
	TaskID int64
	Token  int64
}

// Finish ends one attempt.
type Finish struct {
	TaskID int64
	Token  int64
	// State is the task's next state: SUCCESS, FAILED, DEAD_LETTER,
	// RETRYING or SENSING (with NextAt), or READY (given back).
	State  task.State
	NextAt time.Time
	// Refund takes the attempt back: a snooze, a release or a resource
	// deferral does not use one.
	Refund bool
	// Deferred counts the attempt as a resource deferral: the task's
	// Deferrals goes up by one.
	Deferred bool
	// After is how long the downstream asked to be left alone (a
	// retry.After failure: a Retry-After, a gRPC pushback): the gate holds
	// the task's group that long, for the fleet. Drivers do not write it.
	After time.Duration
	// Waited gives back a claim whose attempt never began (a spent retry
	// budget, a limit, a hold): the task's Waits goes up by one, and no
	// attempt row is written, so that the history keeps attempts. It
	// takes the attempt back as Refund does.
	Waited bool
	// Error, Fingerprint and Streak are the task's latest failure.
	Error       string
	Fingerprint string
	Streak      int
	PrevDelay   time.Duration
	// Attempt closes the attempt record (Number, TaskID and Worker are
	// taken from the task).
	Attempt task.Attempt
	// Publish are events the attempt published: the store that is a
	// Publisher inserts their deliveries in the same transaction, only if
	// the item applies.
	Publish []task.Event
	// Enqueue are tasks to insert, outside any run, in the same
	// transaction, only if the item applies: the engine enqueues a
	// handler's catch task with the failure that calls for it, so that
	// it exists exactly when the failure is recorded. A task whose
	// IdempotencyKey is taken is not inserted, whatever work holds the
	// key (as ReturnExisting): the item applies all the same.
	Enqueue []task.NewTask
	// Trace is the W3C traceparent of the attempt's span ("" for none),
	// kept as the task's AttemptTrace for its next attempt to link to. A
	// success ends the task: a store may leave it unwritten then.
	Trace string
	// Awaits, with State SENSING, is the topic of the message the task
	// waits for (grit.Receive): the wait is not counted in the task's
	// Snoozes (it is no snooze: MaxSnoozes does not bound it), a
	// Mailbox's Send of that topic makes the task due at once, and so
	// does this Finish when a message of the topic is kept already.
	Awaits string
	// AwaitTasks, with State SENSING (and no Awaits), are the tasks
	// whose ends the task waits for (grit.Await), with a store that is
	// an Awaiter: not counted in its Snoozes either; the last of them to
	// end makes it due at once, and so does this Finish when they all
	// ended already (see Awaiter).
	AwaitTasks []int64
}

// RescueRequest asks for expired leases.
type RescueRequest struct {
	Worker string        // the rescuer
	Owner  string        // if set: take every lease of this owner, expired or not
	Lease  time.Duration // the rescuer's lease on what it takes
	Limit  int
}

// Durations is part of Store: the durations of the newest successful
// attempts of tasks of a kind and name ("" for unnamed tasks), at most
// limit of them, newest (by their end) first. The engine uses it to tell,
// when a task keeps timing out, how long the task takes when it succeeds:
// the timeout may be the bug.
type Durations interface {
	SuccessDurations(ctx context.Context, kind, name string, limit int) ([]time.Duration, error)
}

// Waker is an optional capability: a channel that receives a value when
// work may have become due in the store (another process enqueued, a retry
// was scheduled, a dependent was promoted), so that an idle worker claims
// at once instead of at its next poll. One value may stand for many
// notifications; the channel is closed when ctx ends or the store closes.
// A driver says whose writes wake: only its own handle's, or (as
// PostgreSQL's LISTEN/NOTIFY) those of every process on the database.
type Waker interface {
	Wake(ctx context.Context) (<-chan struct{}, error)
}

// CancelWatcher is an optional capability: a channel that receives the id
// of each RUNNING task an operator cancels (Act with ActCancel), once the
// cancel has committed, so that the worker holding it stops its attempt
// at once, or does not start it, instead of learning at its next
// heartbeat. Ids are dropped when the receiver falls behind (the next
// heartbeat still finds the lease gone); the channel is closed when ctx
// ends or the store closes. A driver says whose cancels it sees: its own
// handle's, or (as PostgreSQL's LISTEN/NOTIFY) those of every process.
type CancelWatcher interface {
	WatchCancels(ctx context.Context) (<-chan int64, error)
}

// Spreader is part of Store: how far a failure has spread, so that a
// failure many tasks share (an outage of what they call) is told from one
// task's own (poison).
type Spreader interface {
	// Spread counts the distinct tasks of the query's scope (its Group's
	// tasks when Group is set, else its Kind's) with an attempt that
	// failed with Fingerprint and ended at or after Since, stopping at
	// Limit; and says whether a task of the scope succeeded at or after
	// Since (asked only when Succeeded is wanted: it costs more).
	Spread(ctx context.Context, q SpreadQuery) (Spread, error)
}

// SpreadQuery asks how far a failure spread.
type SpreadQuery struct {
	Kind, Group, Fingerprint string
	Since                    time.Time
	Limit                    int  // count no further; at least 1
	Succeeded                bool // also look for a success
}

// Scope names what q counts: "group G" or "kind K".
func (q SpreadQuery) Scope() string {
	if q.Group != "" {
		return "group " + q.Group
	}
	return "kind " + q.Kind
}

// Spread is a Spreader's answer.
type Spread struct {
	Tasks     int  // distinct tasks that failed so, at most the Limit
	Succeeded bool // a task of the scope succeeded (when asked)
}

// Advisor is an optional capability: what is wrong with the database's
// setup that costs the store speed or space, though not correctness (its
// autovacuum is off, say), each as a sentence that says what to do. A
// worker logs it as a warning when it starts.
type Advisor interface {
	Advice(ctx context.Context) ([]string, error)
}

// QueueCount is how many tasks of a queue are in a state.
type QueueCount struct {
	Queue string     `json:"queue"`
	State task.State `json:"state"`
	N     int        `json:"n"`
}

// Overview is an optional capability: counts of tasks by queue and state,
// and the tasks each worker holds, for grit status.
type Overview interface {
	QueueCounts(ctx context.Context) ([]QueueCount, error)
	// Held counts the RUNNING tasks of each lease owner.
	Held(ctx context.Context) (map[string]int, error)
}

// Backlog is an optional capability: how long the oldest due task of
// each queue has waited for a worker, for the metrics that tell a backlog
// from a quiet queue. It answers from the index of due tasks, one short
// walk a queue.
type Backlog interface {
	// OldestDue returns, for each of queues that has a READY or RETRYING
	// task due now, the NextAt of the one due the longest; queues with
	// none are left out.
	OldestDue(ctx context.Context, queues []string) (map[string]time.Time, error)
	// DueKinds returns the kinds of the READY and RETRYING tasks due at
	// or before before, among the limit of them due the longest, each
	// with how many of those it has and the NextAt of its oldest: the
	// kinds of work that has waited since before, for the check that
	// some live worker serves them (ops.Unserved).
	DueKinds(ctx context.Context, before time.Time, limit int) ([]KindDue, error)
}

// KindDue is a kind of work that waits: DueKinds' answer.
type KindDue struct {
	Kind   string    `json:"kind"`
	Tasks  int       `json:"tasks"`  // among those looked at
	Oldest time.Time `json:"oldest"` // the NextAt of the one due the longest
}

// Enqueues is an optional capability: how many tasks were ever enqueued
// in the store, by any process, for a counter on every scrape target.
type Enqueues interface {
	// EnqueuedTotal is the largest task id handed out: it only grows,
	// but for a store whose newest tasks were all deleted (a driver that
	// reuses ids may then count down, which Prometheus reads as a reset).
	EnqueuedTotal(ctx context.Context) (int64, error)
}

// Console is an optional capability: what the dashboard reads beyond
// the Store's own methods. Each method answers from indexes, never from
// a scan of every task: the dashboard must stay fast on a store with
// millions of them.
type Console interface {
	// ListRuns lists runs, newest first; f pages them.
	ListRuns(ctx context.Context, f task.RunFilter) ([]task.Run, error)
	// DeadLetterGroups groups the DEAD_LETTER tasks by fingerprint, the
	// largest group first (then the one dead-lettered last).
	DeadLetterGroups(ctx context.Context) ([]DeadLetterGroup, error)
	// AttemptSeries counts the attempts that ended at or after since, by
	// step-long bucket and by outcome, oldest bucket first. Every bucket
	// from since to the store's Now is there, empty or not (see
	// SeriesBuckets); a step that is not positive, or that would make more
	// than MaxSeriesBuckets, is task.ErrInvalid.
	AttemptSeries(ctx context.Context, since time.Time, step time.Duration) ([]AttemptBucket, error)
	// RunCounts counts the tasks of each run ids names, by state, through
	// the tasks' index on their run: a page of runs' progress in one read.
	// A run without tasks (or not in the store) has no entry.
	RunCounts(ctx context.Context, ids []int64) (map[int64]map[task.State]int, error)
	// DeleteTasks deletes for good, with their attempts, steps and
	// messages, those of the tasks ids names that have ended (a terminal
	// state, or DEAD_LETTER) and are in no run, and returns their ids,
	// ascending. It leaves the others alone: a task that has not ended
	// may be running, and a run's tasks are read by its graph and its end
	// (they go with their run, when retention prunes it).
	DeleteTasks(ctx context.Context, ids []int64) ([]int64, error)
}

// Deletable reports whether DeleteTasks deletes a task in state s, in no
// run: one that has ended, or waits for an operator as a dead letter.
func Deletable(s task.State) bool { return s.Terminal() || s == task.DeadLetter }

// DeletableStates are the states Deletable allows, which the drivers'
// DeleteTasks are given.
func DeletableStates() []task.State {
	var out []task.State
	for _, s := range task.States {
		if Deletable(s) {
			out = append(out, s)
		}
	}
	return out
}

// DeadLetterGroup is the dead letters that share a fingerprint.
type DeadLetterGroup struct {
	Fingerprint string
	Count       int
	// FirstAt and LastAt are when the group's first and last tasks were
	// dead-lettered.
	FirstAt, LastAt time.Time
	// Sample is the error of the group's newest task (the one
	// dead-lettered last), SampleTask its id, and Kinds the kinds its
	// tasks are of, sorted.
	Sample     string
	SampleTask int64
	Kinds      []string
}

// AttemptBucket counts the attempts that ended in [At, At+step), by
// outcome.
type AttemptBucket struct {
	At       time.Time
	Outcomes map[task.Outcome]int
}

// Auditor is an optional capability: an append-only log of what operators
// did, written by the dashboard and the CLI's operator commands.
type Auditor interface {
	// Audit appends e; its ID and, when zero, its At are the store's.
	Audit(ctx context.Context, e AuditEntry) (AuditEntry, error)
	// AuditLog lists entries newest first, only ids below beforeID (0: no
	// bound), at most limit (0: all).
	AuditLog(ctx context.Context, beforeID int64, limit int) ([]AuditEntry, error)
}

// AuditEntry is one operator action.
type AuditEntry struct {
	ID     int64     `json:"id"`
	At     time.Time `json:"at"`
	Who    string    `json:"who"`    // the session's name for the operator, e.g. "token 3f9a…" or "local"
	Action string    `json:"action"` // e.g. "replay", "cancel", "breaker close"
	// Target says what the action was applied to: a task ("task 42"), a
	// filter ("state=DEAD_LETTER fingerprint=4a7c…"), a group.
	Target string `json:"target"`
	Count  int    `json:"count"`            // how many tasks it changed
	Detail string `json:"detail,omitempty"` // anything else worth keeping, such as a ramp
}

// PollReporter is an optional capability: a worker records its last failed
// claim (the error and how many claims in a row have failed; 0 once it
// claims again), so that grit status can show it.
type PollReporter interface {
	ReportPoll(ctx context.Context, worker, lastError string, failures int) error
}

// RetryRefusal is the error of an action refused for err (whyNot's: the
// task is missing, or in another state). A retry refused although the
// task is FAILED or CANCELLED was refused because the task belongs to a
// run: the error says so, and that the run is redriven instead
// (Store.Redrive), and stays a *task.StateError.
func RetryRefusal(a task.Action, err error) error {
	var wrong *task.StateError
	if a == task.ActRetry && errors.As(err, &wrong) && (wrong.State == task.Failed || wrong.State == task.Cancelled) {
		return fmt.Errorf("it belongs to a run, whose tasks are run again with the run (redrive the run: grit redrive RUN, once the run has ended): %w", err)
	}
	return err
}
