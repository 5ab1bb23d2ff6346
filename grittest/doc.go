// Package grittest tests grit handlers: a test runs a handler's task
// through the real engine, one attempt at a time, on a store and a clock
// of its own, and asserts on what the handler did.
//
//	c := grittest.NewClient(t, grit.Config{})
//	grit.Handle(c.Client, "charge", charge, grit.HandlerConfig{Policy: "3 1s"})
//
//	r := c.Work(t, "charge", Charge{Order: "o-42", Cents: 1999})
//	if r.Task.State != task.Retrying { … } // a transient failure: its retry waits
//	c.AdvanceTo(r.Task.NextAt)             // no sleep: the test's clock moves
//	r = c.WorkTask(t, r.Task.ID)           // the second attempt
//
//	grittest.RequireEnqueued(t, c, "receipt", func(a Receipt) bool { return a.Order == "o-42" })
//	grittest.RequirePublished(t, c, "charged", func(e Charged) bool { return e.Cents == 1999 })
//
// NewClient's store is a SQLite file in t.TempDir(), and its clock a fake
// one that the store (due times, leases) and the worker (its timers)
// share: a retry's backoff, a snooze and a receive's timeout pass when the
// test moves it (Client.Advance), not by waiting. The worker runs only
// the task the test names (Work, WorkTask, RunUntilDone), one attempt at
// a time, through the engine's whole path: the args decoded, steps,
// receives, quarantined items, the retry decision and its record. What
// the handler enqueues, publishes or sends waits for the test to assert
// on it (RequireEnqueued, RequirePublished, RequireSent,
// RequireQuarantined) or to work it in turn.
//
// A failed assertion fails the test with what it wanted and what there
// was instead. Every wait is bounded on the machine's clock: a handler
// that never returns fails the test, it does not hang it.
package grittest
