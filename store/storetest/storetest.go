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
// subtest ends. The suite measures time on the store's clock (Now) and waits
// for it by polling with a bound, never by sleeping a fixed time.
package storetest

import (
	"testing"

	"github.com/grit-run/grit/store"
)

// Run runs the whole suite against the stores open returns.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	groups := []struct {
		name  string
		tests map[string]func(*testing.T, *harness)
	}{
		{"SubmitRun", submitTests},
		{"Enqueue", enqueueTests},
		{"Claim", claimTests},
		{"Finish", finishTests},
		{"DAG", dagTests},
		{"RunEnd", runEndTests},
		{"Heartbeat", heartbeatTests},
		{"Rescue", rescueTests},
		{"NextDue", nextDueTests},
		{"Query", queryTests},
		{"Act", actTests},
		{"Workers", workerTests},
		{"Overview", overviewTests},
		{"PollReport", pollTests},
		{"Publish", publishTests},
		{"Groups", groupTests},
		{"Limits", limitTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, name := range sortedKeys(g.tests) {
				test := g.tests[name]
				t.Run(name, func(t *testing.T) { test(t, newHarness(t, open)) })
			}
		})
	}
}
