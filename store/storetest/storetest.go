// Package storetest is the conformance suite every store driver must pass:
// each rule of the store.Store contract is a subtest named after it.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "grit.db"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// open must return a new, empty store for each call; Run closes it when the
// subtest ends. The subtests run in parallel, so open (and reopen, for
// WakesAcrossHandles) may be called from several goroutines at once. The
// suite measures time on the store's clock (Now) and waits for it by
// polling with a bound, never by sleeping a fixed time. Declared checks,
// beside, that the driver states its contract to the compiler in one
// place.
//
// Every case runs on every driver: the capabilities store.Store embeds
// are called directly (a driver without one does not compile). Only the
// cases of an optional capability (store.Optional) skip on a store
// without it, and those of a promise the driver does not make
// (WakesAcrossHandles, CancelsAcrossHandles). The Refused cases need the
// driver's way to make its database refuse a success
// (RefusesSuccesses), and fail without it.
package storetest

import (
	"testing"

	"github.com/grit-run/grit/store"
)

// An Option tells the suite what more a driver promises.
type Option func(*options)

type options struct {
	reopen func(t *testing.T, s store.Store) store.Store
	// cancelsCross says that cancels, too, are heard across handles.
	cancelsCross bool
	refuse       func(t *testing.T, s store.Store, kind string)
}

// WakesAcrossHandles says that the driver's store.Waker wakes on work made
// due through any handle on the database, in any process (as PostgreSQL's
// LISTEN/NOTIFY does, and SQLite's data_version watcher), not only through
// its own. reopen opens another handle on the database of a store that
// Run's open returned, as another process would; the suite closes it.
func WakesAcrossHandles(reopen func(t *testing.T, s store.Store) store.Store) Option {
	return func(o *options) { o.reopen = reopen }
}

// CancelsAcrossHandles says, beside WakesAcrossHandles (whose reopen it
// uses), that the driver's store.CancelWatcher sees the cancels made
// through any handle, in any process, too (as PostgreSQL's LISTEN/NOTIFY
// does).
func CancelsAcrossHandles() Option {
	return func(o *options) { o.cancelsCross = true }
}

// RefusesSuccesses gives the suite the driver's way to make a store's
// database refuse to record the success of the tasks of one kind (a
// trigger that raises, as a broken constraint would), for the cases that
// check that Finish refuses such an item alone (task.ErrRefused) and
// writes the others of its batch. Every driver must give it: without it
// those cases fail, saying so.
func RefusesSuccesses(refuse func(t *testing.T, s store.Store, kind string)) Option {
	return func(o *options) { o.refuse = refuse }
}

// Run runs the whole suite against the stores open returns.
func Run(t *testing.T, open func(t *testing.T) store.Store, opts ...Option) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, name := range sortedKeys(g.tests) {
				test := g.tests[name]
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					test(t, newHarness(t, open, o))
				})
			}
		})
	}
}

// groups are the suite's cases, by what they check.
var groups = []struct {
	name  string
	tests map[string]func(*testing.T, *harness)
}{
	{"SubmitRun", submitTests},
	{"Enqueue", enqueueTests},
	{"Claim", claimTests},
	{"Fair", fairTests},
	{"Finish", finishTests},
	{"Refused", refusedTests},
	{"Fence", fenceTests},
	{"DAG", dagTests},
	{"RunEnd", runEndTests},
	{"Redrive", redriveTests},
	{"Heartbeat", heartbeatTests},
	{"Rescue", rescueTests},
	{"NextDue", nextDueTests},
	{"Query", queryTests},
	{"List", listTests},
	{"Act", actTests},
	{"Workers", workerTests},
	{"Overview", overviewTests},
	{"PollReport", pollTests},
	{"Backlog", backlogTests},
	{"Enqueues", enqueuesTests},
	{"Publish", publishTests},
	{"Groups", groupTests},
	{"Limits", limitTests},
	{"Rates", rateTests},
	{"Durations", durationTests},
	{"Waker", wakerTests},
	{"CancelWatcher", cancelTests},
	{"Spreader", spreadTests},
	{"Console", consoleTests},
	{"Auditor", auditTests},
	{"Pauser", pauseTests},
	{"Pruner", pruneTests},
	{"Scheduler", scheduleTests},
	{"Stepper", stepTests},
	{"Quarantiner", quarantineTests},
	{"Machines", machineTests},
	{"Mailbox", mailboxTests},
	{"Awaiter", awaitTests},
}
