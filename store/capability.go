package store

import (
	"errors"
	"fmt"
	"strings"
)

// ErrMissingCapability is matched by the error of a store that lacks a
// capability the engine and the API server require (see CheckCapabilities).
var ErrMissingCapability = errors.New("store: missing a required capability")

// capability is one of the small interfaces beside Store: what it gives
// and what is lost without it.
type capability struct {
	name     string // the interface, as code names it
	provides string
	without  string
	in       func(Store) bool
}

func has[C any](st Store) bool { _, ok := st.(C); return ok }

// required are the capabilities that the engine's and the API server's
// promises rest on: a store without one would let them run, silently
// without that protection, so they refuse it.
var required = []capability{
	{"store.GroupBreakers", "the groups' circuit breakers, retry budgets and limits, shared by the fleet",
		"workers would call a failing downstream with no breaker, budget or limit", has[GroupBreakers]},
	{"store.Limiter", "concurrency limits per queue and per tenant",
		"workers would run past every queue and tenant limit", has[Limiter]},
	{"store.Publisher", "events and their subscribers, the transactional outbox",
		"events could not be published, nor committed with a handler's success", has[Publisher]},
	{"store.Durations", "the durations of a task's successful runs",
		"a task that keeps timing out would be reported without the p99 that tells whether its timeout is the bug", has[Durations]},
}

// optional are the capabilities a store may lack: the engine works
// without them, a little slower or less informative.
var optional = []capability{
	{"store.Waker", "wake-ups when work becomes due",
		"idle workers find work enqueued by other processes at their next poll", has[Waker]},
	{"store.Advisor", "advice on the database's setup",
		"no warning at start about settings that cost speed or space", has[Advisor]},
	{"store.Overview", "task counts by queue and state",
		"grit status cannot count tasks", has[Overview]},
	{"store.PollReporter", "workers' last failed claims",
		"grit status cannot show why a worker's claims fail", has[PollReporter]},
	{"store.Backlog", "the age of each queue's oldest due task",
		"the metrics cannot show how long the oldest due task has waited", has[Backlog]},
	{"store.Pauser", "pauses of queues, kinds and tenants, shared by the fleet",
		"nothing can be paused: workers claim every queue's, kind's and tenant's tasks", has[Pauser]},
	{"store.Pruner", "retention: finished tasks deleted once their states' rules let them go",
		"finished tasks are kept forever, whatever the retention: the store grows for as long as it runs", has[Pruner]},
	{"store.Scheduler", "schedules: periodic tasks, kept in the store and ticked by the fleet",
		"no schedule can be declared: periodic tasks must be enqueued from outside", has[Scheduler]},
	{"store.Stepper", "durable steps: the results of a handler's steps, kept across its attempts",
		"grit.Step cannot record: a retried handler runs all its steps again", has[Stepper]},
	{"store.Machines", "state machines: their instances, delivered one event at a time",
		"no state machine can run: grit.Send has nowhere to keep an instance", has[Machines]},
}

// CheckCapabilities returns an error matching ErrMissingCapability, a
// *CapabilityError, when st lacks a capability the engine and the API
// server require: GroupBreakers, Limiter, Publisher and Durations. Each is
// a small interface of its own, found by type assertion, so a store that
// wraps another must implement them too (by embedding a type that has
// them, not the Store interface alone). The conformance suite,
// store/storetest, checks each.
func CheckCapabilities(st Store) error {
	var missing []string
	for _, c := range required {
		if !c.in(st) {
			missing = append(missing, c.name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &CapabilityError{Store: fmt.Sprintf("%T", st), Missing: missing}
}

// MissingOptional lists, each with what is lost, the optional
// capabilities st lacks (Waker, Advisor, Overview, PollReporter, Backlog,
// Pauser, Pruner, Scheduler, Stepper, Machines); none when it has them all.
func MissingOptional(st Store) []string {
	var out []string
	for _, c := range optional {
		if !c.in(st) {
			out = append(out, fmt.Sprintf("%s (%s: %s)", c.name, c.provides, c.without))
		}
	}
	return out
}

// CapabilityError is the error of a store that lacks required
// capabilities.
type CapabilityError struct {
	Store   string   // the store's type, e.g. *mydriver.Store
	Missing []string // the interfaces it lacks, e.g. store.GroupBreakers
}

func (e *CapabilityError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "store: %s lacks ", e.Store)
	for i, name := range e.Missing {
		if i > 0 {
			b.WriteString("; and ")
		}
		b.WriteString(name)
		for _, c := range required {
			if c.name == name {
				fmt.Fprintf(&b, " (%s): %s", c.provides, c.without)
			}
		}
	}
	it := "it"
	if len(e.Missing) > 1 {
		it = "them"
	}
	fmt.Fprintf(&b, "; implement %s (the conformance suite store/storetest checks each)", it)
	return b.String()
}

// Is matches ErrMissingCapability.
func (e *CapabilityError) Is(target error) bool { return target == ErrMissingCapability }
