// Package sqlite is grit's embedded store: a store.Store on one SQLite file,
// with no set-up, through the pure Go driver modernc.org/sqlite.
//
//	s, err := sqlite.Open(ctx, "sqlite:path/to/grit.db")
//
// The database runs in WAL mode with synchronous=FULL, so a write that has
// returned has been fsynced and survives a crash of the process or of the
// machine. Every write (submit, enqueue, claim, finish, heartbeat, rescue,
// act, workers) goes to one writer goroutine, which takes whatever requests
// are queued, runs each in its own SAVEPOINT (one failing request does not
// fail the others) and commits them all in one BEGIN IMMEDIATE transaction:
// the cost of a commit is shared by everything in it, and the writer never
// waits when it is idle. Reads use a separate pool of read-only connections,
// which WAL lets run beside the writer.
//
// An attempt lives on its task row until it ends (its number, lease
// token, worker and start): a claim writes the task rows alone, and an
// attempt's own row in attempts is written once, when it ends, from the
// task row as it was. A plain success (store.Finish.PlainSuccess: nothing
// to record but its end, the common case) writes no attempts row at all:
// its attempt stays on the task row, where Attempts, SuccessDurations and
// the Console read it. A claim and its success write two rows between
// them, on one table; the writer's time goes to row writes, so fewer rows
// is more tasks a second.
//
// A call whose context ends while its write waits in the queue writes
// nothing; once the writer has started a request, it commits with its batch
// even if the call has already returned the context's error.
//
// Several processes may open the same file: BEGIN IMMEDIATE serialises their
// writers, and a claim selects and updates its tasks in one such
// transaction, so no task is claimed twice. The handles of one process on
// one file take turns on an in-process lock first, so that they wait for
// each other at once rather than in the sleeps of SQLite's busy handler.
//
// The store is a store.Store, with the capabilities it embeds, and has
// every optional capability but store.Advisor (open.go lists them).
//
// Wake (store.Waker) wakes an idle worker when work becomes due, whoever
// wrote it. The Stores of one process on one file share their wakes: a
// commit through any of them that inserts a READY task, schedules a
// retry or release, promotes a dependent or replays a task wakes every
// waiter at once, before the call that committed returns. A commit by
// another process is seen by a watcher that reads PRAGMA data_version on
// a connection of its own, while someone waits: every 10ms while the file
// changes, and less often as it stays quiet, up to every 100ms. A busy
// worker wakes within 10ms, an idle one within 100ms, at a cost of about
// 0.4% of a core of a small VM while idle (watchEvery says why those
// intervals). The watcher cannot tell what the
// other process wrote, so its wakes are hints, and cost an empty claim
// when nothing was due.
//
// The schema is created and upgraded on open from the versioned SQL files
// embedded in migrations/, recorded in the schema_migrations table.
// OpenExisting (Config.Existing) creates and upgrades nothing: it opens
// only a grit database that is there at this driver's schema.
package sqlite
