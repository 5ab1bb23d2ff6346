// Package poll lets a test wait for a condition that nothing announces (a
// row in a store, a line in a file, a process gone from /proc): it checks
// the condition often, and fails the test, saying what it waited for, once
// a deadline passes. A test that can wait on the event itself (a channel,
// a hook, a line a process prints) does that instead.
package poll

import (
	"testing"
	"time"
)

// Every is how often a condition is checked.
const Every = 10 * time.Millisecond

// Until checks cond every Every until it holds, and fails the test with
// what it waited for if within passes first.
func Until(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	UntilSays(t, within, func() string { return "waiting for " + what }, cond)
}

// UntilSays is Until for a failure that is best told by what the
// condition saw last: says is called once, when the wait has failed.
func UntilSays(t testing.TB, within time.Duration, says func() string, cond func() bool) {
	t.Helper()
	if !Wait(within, cond) {
		t.Fatalf("gave up after %v: %s", within, says())
	}
}

// Wait checks cond every Every until it holds or within has passed, and
// reports whether it held: for a caller that does more than fail when it
// did not.
func Wait(within time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(Every)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			return cond()
		case <-tick.C:
		}
	}
	return true
}
