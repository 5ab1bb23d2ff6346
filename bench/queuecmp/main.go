// Command queuecmp measures grit against River (riverqueue/river), and
// against the least a queue with no library can do (pg-limit,
// sqlite-limit), on the same PostgreSQL, and on SQLite, in one run, one
// system and one workload at a time, never two at once.
//
//	go run ./queuecmp                      # all eight systems, default sizes
//	go run ./queuecmp --systems grit,river-tuned --jobs 5000 --rounds 5 --json
//	go run ./queuecmp --systems grit-sqlite,river-sqlite,sqlite-limit  # no server needed
//
// On PostgreSQL (--db), every workload runs on a fresh schema of its own
// (queuecmp_<pid>_<run>_<system>_<workload>), created before and dropped
// after it. On SQLite, every workload runs on a fresh database file of its
// own, in one temporary folder removed at the end of the run, with the
// same durability for all three SQLite systems: journal_mode=WAL and
// synchronous=FULL (every commit fsynced), on modernc.org/sqlite, the pure
// Go SQLite grit's store uses. River's tables are made with rivermigrate,
// through its pgx driver or its riversqlite driver. Each grit and River
// system has a worker client, which runs the jobs, and a separate
// insert-only client on its own connection pool that is never started, so
// the worker learns of new jobs the way a worker in another process would:
// through the system's own notifications and polling (on PostgreSQL,
// LISTEN/NOTIFY; on SQLite, River's notification table, polled, and
// grit's store, whose handles on one file share their wakes in a
// process), not through its client's in-process wake-up. The limits have
// no clients: pg-limit inserts on its workers' pool and notifies through
// pg_notify, sqlite-limit inserts on its one connection and wakes its
// worker in process. On SQLite, every system's completed jobs are counted
// on a read connection of their own. Every handler is a no-op apart from
// what the workload records.
//
// The workloads:
//
//   - throughput: --jobs no-op jobs are inserted in batches of 1000 (River
//     InsertManyFast, grit's store Enqueue, both COPY on PostgreSQL;
//     pg-limit's COPY; sqlite-limit's INSERTs in one transaction) before
//     the worker starts. The clock runs from just before the worker's
//     Start until the handler has run --jobs times and a count in the
//     database shows every job completed, polled every 5ms with the same
//     statement for every system (count(*) of the job table WHERE state is
//     River's or the limit's completed, or grit's SUCCESS). Reported as jobs per second, so it includes the
//     worker's start-up and the durable write of every completion; how
//     long after Start the first job ran is reported beside. Over the
//     same time, the CPU time of this process (getrusage) and of the
//     PostgreSQL server (its postmaster and the processes it started, from
//     /proc, when it runs on this machine) is reported per job, and how
//     busy the two kept the machine's CPUs: where both systems share the
//     CPUs with the database, this says where the time of each job went.
//     SQLite runs in this process: its CPU is in this process's.
//     The workload runs --rounds times (3) on every system, the systems
//     taking turns within each round, and each system's median run is
//     reported, with every run's jobs/s and each round's ratios: grit's
//     run lasts a fraction of a second, long enough for one slow moment of
//     a shared machine to move it by a fifth, and the turns spread every
//     system's runs over the same minutes. The other workloads run once
//     per system, after every round.
//   - latency (enqueue→start): with the worker started and idle (one
//     warm-up job has been run), the insert-only client inserts
//     --latency-jobs jobs one at a time, about 5ms apart. Each job carries
//     the wall-clock time read just before its insert; the handler records
//     now minus that time. Reported as p50, p90, p99 and max.
//   - retry lateness: the same paced, one-at-a-time inserts of --retry-jobs
//     jobs whose handler fails attempt 1 and succeeds on attempt 2, with the
//     retry due 100ms after the failure. Lateness is the start of attempt 2
//     minus (the end of attempt 1 + 100ms): how late past its due time a
//     retry runs. Reported as p50, p99 and max.
//
// The systems:
//
//   - river-defaults: River's defaults (FetchCooldown 100ms,
//     FetchPollInterval 1s) with MaxWorkers 100 on the default queue.
//   - river-tuned: FetchCooldown 2ms, FetchPollInterval 20ms, MaxWorkers
//     1000. The insert-only client gets the same FetchCooldown, because River
//     sends at most one insert notification per queue per FetchCooldown of
//     the inserting client.
//   - grit: grit's public API, Concurrency 1000, every other setting at its
//     default; its fault tolerance (leases, heartbeats, attempt records)
//     cannot be turned off and stays on.
//   - grit-defaults: grit.Config{}, that is Concurrency 10.
//   - grit-features: grit with every feature a worker can switch on, on
//     at once: Prometheus metrics (a registry of its own, never scraped),
//     an OpenTelemetry span for every attempt (all sampled, batched, and
//     dropped by the exporter, so the cost is grit's and the SDK's), an
//     hourly schedule (ticking, never due in a workload), a declared state
//     machine, and the handler's timeout learned (grit.AutoTimeout).
//     Retention and the outage detector are defaults, on in grit too;
//     durable steps cost a handler only when it calls grit.Step. It is
//     compared with grit alone: what the features cost.
//   - grit-tenants, grit-sqlite-tenants: grit and grit-sqlite with the
//     jobs spread over 10,000 tenants (job i is tenant i mod 10,000's),
//     compared with the same system on one tenant: what fair claims
//     across tenants cost when there are many.
//   - grit-sqlite: grit as grit (Concurrency 1000) on its embedded store
//     (sqlite:FILE), which sets WAL and synchronous=FULL itself and
//     commits every write through one writer, in batches.
//   - river-sqlite: River with its riversqlite driver, tuned as
//     river-tuned (FetchCooldown 2ms, FetchPollInterval 20ms, MaxWorkers
//     1000), the worker client and the insert client each on a pool of
//     one connection, as River's driver asks (SQLite has one writer at a
//     time).
//   - pg-limit: the least a PostgreSQL queue can do per job, with no
//     library: a job table (id, state, args, attempt, run_at, with an index
//     on the available jobs), 2 workers each on its own connection, which
//     claim 1000 jobs with one UPDATE … WHERE id IN (SELECT … FOR UPDATE
//     SKIP LOCKED LIMIT 1000) RETURNING, run them, and complete the batch
//     with a second UPDATE (a failed job available again 100ms later), each
//     statement its own commit. An insert notifies through pg_notify; an
//     idle worker waits for a notification or the earliest job due. No
//     lease, heartbeat, attempt record or retry policy. 2 workers and
//     batches of 1000 were its best on a 2-core VM of those tried (20,000
//     jobs: 100×2 51k jobs/s, 100×4 49k, 500×2 75k, 1000×1 68k, 1000×2
//     80k, 1000×4 69k; 2000×2 88k, but a batch larger than what grit's or
//     River's worker holds at once, 1000, measures the batch, not the
//     queue).
//   - sqlite-limit: pg-limit's job table on SQLite, with no library: 1
//     worker on one write connection (SQLite has one writer: a second
//     worker would wait for the first's lock), which claims 1000 jobs
//     with one UPDATE … WHERE id IN (SELECT … LIMIT 1000) RETURNING, runs
//     them, and completes the batch with a second UPDATE (a failed job
//     available again 100ms later), each in its own BEGIN IMMEDIATE
//     transaction. An insert wakes the worker in process; an idle worker
//     waits for that or the earliest job due. No lease, heartbeat,
//     attempt record or retry policy. Batches of 1000, as pg-limit's, of
//     those tried on a 2-core VM (20,000 jobs, the median of 3 runs: 100
//     87k jobs/s, 500 158k, 1000 155k, 2000 167k): 500 and 1000 are alike
//     within the runs' spread, and 2000, like pg-limit's, is larger than
//     what grit's or River's worker holds at once.
//
// Retries: River's worker overrides NextRetry to return now + 100ms. River
// moves a retry due within its scheduler interval (5s, not configurable in
// River v0.51) straight to available with a future scheduled_at, so the
// retry is picked up by the worker's next fetch: a FetchPollInterval tick,
// or a fetch another notification causes. River's completer writes the
// failure in a batch, though, and with fewer than 100 results waiting it
// writes at most every 250ms, so a retry cannot start before that write
// whatever the fetch settings. grit's handler policy is
// "1 100ms": one retry after a constant 100ms, with no jitter (a constant
// backoff has none), due on the store's clock; the worker sleeps until the
// earliest due task.
//
// As the queue grows: with --backlog N, each system also drains, once, N
// jobs all due before its worker starts, and its rate is compared with
// its own throughput workload's (a deep queue must not slow the drain);
// with --future N, each system also runs the enqueue→start workload with
// N jobs waiting that are due in an hour (scheduled work, retries waiting
// out their backoff), and its p99 is compared with its own p99 with none
// (work that is not due must not slow the claims of the work that is).
// Both are compared across systems too. They take long with a million
// jobs (the inserts alone, minutes per system): give them to the systems
// you want, e.g. --systems grit,river-tuned,pg-limit --backlog 1000000.
//
// With --cpuprofile FILE, each system's throughput workload writes a CPU
// profile of this process, from its worker's start to its last completion,
// to FILE.<system>.
//
// On PostgreSQL, grit and River use their default connection pool sizes.
// The run ends with a table (or, with --json, one JSON object), the
// ratios of each grit system to each other system on the same store (a
// ratio across stores would measure the store, not the queue;
// grit-features to grit alone, the many-tenants systems to the same grit
// on one tenant), and the
// machine, the PostgreSQL settings (fsync, synchronous_commit,
// autovacuum) and the SQLite version, settings and file system the
// numbers were taken on. The SQLite systems need no server: a run of
// them alone does not connect to --db.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
