// Package postgres is grit's store for a fleet of workers: a store.Store on
// a PostgreSQL schema (15 or later) that any number of processes share,
// through pgx.
//
//	s, err := postgres.Open(ctx, "postgres://user@host:5432/db?schema=grit")
//
// Every time the store sets (lease expiries, due times, starts and ends)
// is read from the database's clock, never the worker's, so workers whose
// clocks disagree still agree on leases. Now returns that clock.
//
// A claim is one statement: it locks the first due tasks in claim order
// with FOR UPDATE SKIP LOCKED (claimers skip each other's rows instead of
// waiting) and moves them to RUNNING under new lease tokens; the open
// attempt lives on the task row. Finish ends a whole batch in one
// transaction: one statement applies every item whose task is still
// RUNNING under its token and writes the attempts' rows (each attempt is
// written once, when it ends), then dependents and runs move. A batch of
// plain successes of tasks outside runs, the common case, is one statement
// and its own transaction. A heartbeat renews
// all of a worker's leases in one statement; a rescue takes expired leases
// in one statement, with SKIP LOCKED too. A transaction that loses a
// conflict (a serialization failure, a deadlock) is retried a few times,
// with a short jittered backoff, before its error is returned.
//
// Enqueue inserts a batch in one statement (COPY for large batches
// without idempotency keys); EnqueueTx does it in the caller's pgx
// transaction, so that tasks commit, or not, with the caller's own
// writes; a small batch without idempotency keys is inserted and notified
// in one statement. Enqueue, SubmitRun, Finish and Act notify a channel when tasks
// become due, and Wake listens to it, reconnecting when the connection
// drops, so idle workers wake at once instead of polling, whichever
// process made the work due.
//
// The store is a store.Store, with the capabilities it embeds, and has
// every optional capability (open.go lists them). SuccessDurations finds
// the newest successes of a kind and name through a partial index of
// SUCCESS tasks (migration 0016); the Console's reads go through that
// index and those of migration 0020, and the Auditor appends to its audit
// table.
//
// The schema (Config.Schema, the DSN's schema parameter, or "grit") is
// created and migrated on open, and by Migrate, from the versioned SQL
// files embedded in migrations/, which change tables, columns and
// indexes, under an advisory lock so that processes starting together
// migrate once. The SQL functions are not among them: each function's
// current text is one file of functions/, written after the migrations in
// the same transaction whenever the schema's record of them
// (schema_functions) differs. A schema migrated by a newer grit is
// refused. OpenExisting (Config.Existing) creates, migrates and writes
// nothing: it opens only a schema that is there at this driver's version,
// and so works on a read-only database or role.
//
// The store works through a connection pooler in transaction mode
// (PgBouncer): it finds one when it opens (route.go) and then keeps no
// state in a session, and listens for notifications on Config.NotifyDSN,
// a direct connection, or not at all (store.ErrNoNotifications: claimers
// poll). The store's watchers share one listening connection.
//
// The store's connections plan every statement with its own arguments
// (plan_cache_mode=force_custom_plan directly; unnamed statements behind a
// pooler), and the statements are written so
// that their plans stay index lookups when the table statistics are wrong,
// as they are in a new schema or after a burst: see due_tasks in
// functions/ and finishTasksSQL. The claim and a batch of plain
// successes, which every task goes through, are functions planned once
// per connection (claim_tasks and succeed_alone), their plans pinned to
// the claim index and primary key lookups. The
// dashboard's reads (the Console) are planned at each call from the
// statistics autovacuum keeps (console_test.go checks their plans on
// analyzed tables). Rows of tasks are read from their binary wire values
// where they come so (rows.go).
package postgres
