package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"time"
)

// retryDelay is when a failed attempt's retry is due, on every system.
const retryDelay = 100 * time.Millisecond

// jobKind names the jobs of every workload, on every system.
const jobKind = "queuecmp"

// job is what every job carries.
type job struct {
	// Seq is the job's index in its workload; warmUp for the job that
	// checks the worker is running before the measured ones.
	Seq int `json:"seq"`
	// Sent is the wall clock, in Unix nanoseconds, read just before the
	// insert.
	Sent int64 `json:"sent,omitempty"`
	// At is when the job is due; zero is at once. Only insertBatch reads
	// it (the future backlog of --future).
	At time.Time `json:"-"`
}

const warmUp = -1

// handlerFunc runs each attempt of a job; attempt counts from 1.
type handlerFunc func(j job, attempt int) error

// queue is one system on one schema: a worker, not started until start,
// that runs every attempt with the workload's handler, and a separate
// insert-only client that is never started.
type queue interface {
	// insertBatch inserts jobs in one batch through the insert client.
	insertBatch(ctx context.Context, jobs []job) error
	// insert inserts one job through the insert client.
	insert(ctx context.Context, j job) error
	start(ctx context.Context) error
	// completed counts the jobs the database holds as completed.
	completed(ctx context.Context) (int, error)
	// close stops the worker, letting ctx bound the drain, and closes
	// both clients.
	close(ctx context.Context) error
}

// system is one of the compared setups.
type system struct {
	name string
	// store is the database it runs on: a ratio compares only systems on
	// the same one.
	store storeKind
	// grit tells the grit systems from the others, for the ratios.
	grit bool
	// versus, when set, are the only systems a grit system's ratios are
	// taken against: grit-features is compared with plain grit, to show
	// what the features cost, and the many-tenants systems with the same
	// grit on one tenant.
	versus []string
	config string // how it is set up, for the report
	// open opens the system on at, the workload's fresh schema
	// (PostgreSQL) or database file (SQLite).
	open func(ctx context.Context, e *env, at string, h handlerFunc) (queue, error)
}

type storeKind string

const (
	onPostgres storeKind = "PostgreSQL"
	onSQLite   storeKind = "SQLite"
)

// env is what every system opens on.
type env struct {
	dsn     string
	logger  *slog.Logger
	schemas *schemas // nil when no system runs on PostgreSQL
	server  int      // the postmaster's pid when it runs on this machine, else 0
	files   *files   // nil when no system runs on SQLite
	// cpuprofile, when set, is where the throughput workload writes a CPU
	// profile of this process: cpuprofile.<system>.
	cpuprofile string
}

var riverTuned = riverTuning{maxWorkers: 1000, fetchCooldown: 2 * time.Millisecond, fetchPollInterval: 20 * time.Millisecond}

var systems = []system{
	riverSystem("river-defaults", riverTuning{maxWorkers: 100}),
	riverSystem("river-tuned", riverTuned),
	gritSystem("grit", 1000),
	gritSystem("grit-defaults", 0),
	gritFeaturesSystem(),
	gritTenantsSystem("grit-tenants", gritSystem("grit", 1000)),
	limitSystem(),
	gritSQLiteSystem("grit-sqlite", 1000),
	gritTenantsSystem("grit-sqlite-tenants", gritSQLiteSystem("grit-sqlite", 1000)),
	riverSQLiteSystem("river-sqlite", riverTuned),
	sqliteLimitSystem(),
}

// uses tells whether any of systems runs on st.
func uses(systems []system, st storeKind) bool {
	return slices.ContainsFunc(systems, func(s system) bool { return s.store == st })
}

// fresh makes the empty schema or database file of a system's workload,
// and returns it with what drops it.
func (e *env) fresh(ctx context.Context, sys system, workload string) (at string, drop func(context.Context) error, err error) {
	if sys.store == onSQLite {
		at, err = e.files.create(sys.name, workload)
		return at, func(context.Context) error { return e.files.drop(at) }, err
	}
	at, err = e.schemas.create(ctx, sys.name, workload)
	return at, func(ctx context.Context) error { return e.schemas.drop(ctx, at) }, err
}

func systemNames() []string {
	names := make([]string, len(systems))
	for i, s := range systems {
		names[i] = s.name
	}
	return names
}

func systemNamed(name string) (system, bool) {
	for _, s := range systems {
		if s.name == name {
			return s, true
		}
	}
	return system{}, false
}

// profile starts the CPU profile of sys's throughput workload, when one
// was asked for. The returned stop may be called more than once.
func (e *env) profile(sys system) (stop func(), err error) {
	if e.cpuprofile == "" {
		return func() {}, nil
	}
	name := e.cpuprofile + "." + sys.name
	f, err := os.Create(name)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile %s: %w", name, err)
	}
	return sync.OnceFunc(func() {
		pprof.StopCPUProfile()
		f.Close()
	}), nil
}

// dueAt is when j is due: its At, or now.
func dueAt(j job) time.Time {
	if j.At.IsZero() {
		return time.Now()
	}
	return j.At
}
