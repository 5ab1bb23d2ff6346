package store

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
)

// Capability is an optional capability: a small interface beside Store
// that a driver may lack, what it gives, and what is lost without it.
type Capability struct {
	Name     string // the interface, as code names it: "store.Waker"
	Provides string
	Without  string
	in       func(Store) bool
}

// In reports whether st has the capability.
func (c Capability) In(st Store) bool { return c.in(st) }

func has[C any](st Store) bool { _, ok := st.(C); return ok }

// optional is the one list of the optional capabilities, in the order the
// package doc names them. A capability is here, rather than in Store,
// when a driver could sensibly lack it and the engine and the API server
// still keep every promise: what is lost is speed (a wake-up, a cancel
// heard at once), what operators can see, or a feature that is refused,
// saying so, when it is asked for (a pause, a schedule, a state machine),
// never a protection that silently stops working.
var optional = []Capability{
	{"store.Waker", "wake-ups when work becomes due",
		"idle workers find work enqueued by other processes at their next poll", has[Waker]},
	{"store.CancelWatcher", "the cancels of running tasks, heard at once",
		"a running attempt whose task an operator cancels ends at its worker's next heartbeat (a third of the lease), not at once; " +
			"the cancel still takes the lease back, and a process task cancelled before it starts still never starts", has[CancelWatcher]},
	{"store.Advisor", "advice on the database's setup",
		"no warning at start about settings that cost speed or space", has[Advisor]},
	{"store.Overview", "task counts by queue and state",
		"grit status, the metrics and the dashboard cannot count tasks", has[Overview]},
	{"store.PollReporter", "workers' last failed claims",
		"grit status cannot show why a worker's claims fail", has[PollReporter]},
	{"store.Backlog", "the age of each queue's oldest due task",
		"the metrics and the dashboard cannot show how long the oldest due task has waited", has[Backlog]},
	{"store.Enqueues", "how many tasks the store was ever given",
		"the metrics count the tasks each process enqueued, not those every process did", has[Enqueues]},
	{"store.Console", "the dashboard's runs, dead letters by fingerprint and attempts over time",
		"those pages of the dashboard are empty", has[Console]},
	{"store.Auditor", "an append-only log of what operators did",
		"operators' actions are not kept: the dashboard writes them to its process's log, the CLI and the API server nowhere, " +
			"and the dashboard's audit page has nothing to show", has[Auditor]},
	{"store.Pauser", "pauses of queues, kinds and tenants, shared by the fleet",
		"nothing can be paused: grit pause and the API's Pause refuse, saying so, and workers claim every queue's, kind's and tenant's tasks", has[Pauser]},
	{"store.PauseWatcher", "pauses and resumes, heard at once",
		"a worker learns of a pause at its next heartbeat: it claims none of the paused tasks once the pause has committed (its claims read the pauses), " +
			"but may start, up to a heartbeat later, paused tasks it claimed before", has[PauseWatcher]},
	{"store.Scheduler", "schedules: periodic tasks, kept in the store and ticked by the fleet",
		"no schedule can be declared (New refuses Config.Schedules, saying so): periodic tasks must be enqueued from outside", has[Scheduler]},
	{"store.Machines", "state machines: their instances, delivered one event at a time",
		"no state machine can run (New refuses Config.Machines, and grit.Send fails, saying so)", has[Machines]},
	{"store.InTx", "enqueue and publish in the caller's own transaction (a transactional outbox)",
		"Client.EnqueueTx and PublishTx refuse, saying which store can; tasks are enqueued in transactions of their own", has[InTx]},
	{"store.Mailbox", "messages sent to tasks, which their handlers receive (grit.Receive) with the slot free while they wait",
		"grit.Receive fails its task permanently, and sending a message (Client.SendToTask, grit send) is refused, saying so", has[Mailbox]},
	{"store.Awaiter", "results handlers set for their tasks, and handlers that await other tasks (grit.Await) with the slot free while they wait",
		"grit.SetResult and grit.Await fail their task permanently, saying so", has[Awaiter]},
	{"store.Connector", "how the store reaches its database: straight or through a pooler, where it listens, how many connections it opens",
		"grit status and a starting worker cannot say how the store connects", has[Connector]},
	{"store.Weigher", "tenants' weights in fair claims",
		"every tenant has the default weight: claims still take tenants in turn, in equal shares, and setting a weight is refused, saying so", has[Weigher]},
	{"store.Replicated", "where the database is in its write-ahead log, to tell a replica's lag",
		"grit status and the dashboard read from a --read-store without saying how far behind the store it is", has[Replicated]},
}

// Optional returns the optional capabilities, in the order the package
// doc names them.
func Optional() []Capability { return slices.Clone(optional) }

// LogMissing logs, in one line at Info, what the optional capabilities st
// lacks would give and what a worker or a server does without them, as
// it starts on st.
func LogMissing(l *slog.Logger, st Store) {
	var out []string
	for _, c := range optional {
		if !c.In(st) {
			out = append(out, c.Provides+" ("+c.Without+")")
		}
	}
	if len(out) > 0 {
		l.Info("the store lacks optional capabilities", "missing", strings.Join(out, "; "))
	}
}

// MissingOptional lists, each with what it gives and what is lost, the
// optional capabilities st lacks; none when it has them all.
func MissingOptional(st Store) []string {
	var out []string
	for _, c := range optional {
		if !c.In(st) {
			out = append(out, fmt.Sprintf("%s (%s: %s)", c.Name, c.Provides, c.Without))
		}
	}
	return out
}
