// Package chaos runs a fleet of grit workers on PostgreSQL under a steady
// load of short process tasks while it injects faults at random (from a
// seed, so a run can be repeated): SIGKILL of a worker (restarted at once),
// SIGSTOP of a worker past its lease then SIGCONT, and a restart of the
// PostgreSQL cluster when it is given one to control. At the end it checks,
// from the store and from the ledger the tasks write, that no acknowledged
// task was lost, none succeeded twice, every one is final, and a task ran
// again only when a fault interrupted its attempt; and it reports the
// takeover times. grit chaos is its command.
package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/grit-run/grit/store"
)

// Config is a chaos run. Zero fields mean the documented defaults; Store,
// DSN, Exe and Dir are required.
type Config struct {
	Store store.Store // the fleet's store, opened by the caller
	DSN   string      // the same store, for the workers' --store
	Exe   string      // the grit binary the workers run
	Env   []string    // added to the workers' environment
	Dir   string      // a directory of the run's own: the ledger, the workers' logs
	For   time.Duration
	Seed  uint64
	// Workers is the fleet's size; default 3.
	Workers int
	// Rate is how many tasks are enqueued a second; default 40.
	Rate int
	// Every is the mean time between faults; default 4s.
	Every time.Duration
	// Lease is the workers' lease (their heartbeat a third of it); default 3s.
	Lease time.Duration
	// PGData, if set, is the data directory of a PostgreSQL cluster the
	// run may restart (pg_ctl -D PGData restart), as its owner; PGCtl is
	// the pg_ctl to use (default: the one on PATH).
	PGData, PGCtl string
	// Settle bounds the wait, after the last fault, for every task to be
	// final; default 2m.
	Settle time.Duration
	Out    io.Writer // progress lines; default none
}

// Defaults of a run.
const (
	DefaultWorkers = 3
	DefaultRate    = 40
	DefaultEvery   = 4 * time.Second
	DefaultLease   = 3 * time.Second
	DefaultSettle  = 2 * time.Minute
)

func (c *Config) validate() error {
	switch {
	case c.Store == nil || c.DSN == "":
		return errors.New("chaos: no store: give a PostgreSQL DSN (--store postgres://…)")
	case c.Exe == "" || c.Dir == "":
		return errors.New("chaos: no grit binary or working directory")
	case c.For <= 0:
		return fmt.Errorf("chaos: run time %v: want a positive duration (e.g. --for 1m)", c.For)
	case c.Workers < 0 || c.Rate < 0 || c.Every < 0 || c.Lease < 0 || c.Settle < 0:
		return errors.New("chaos: negative workers, rate, fault interval, lease or settle time")
	}
	return nil
}

func (c *Config) setDefaults() {
	c.Workers = cmpOr(c.Workers, DefaultWorkers)
	c.Rate = cmpOr(c.Rate, DefaultRate)
	c.Every = cmpOr(c.Every, DefaultEvery)
	c.Lease = cmpOr(c.Lease, DefaultLease)
	c.Settle = cmpOr(c.Settle, DefaultSettle)
	if c.Out == nil {
		c.Out = io.Discard
	}
	if c.PGCtl == "" {
		c.PGCtl = "pg_ctl"
	}
}

func cmpOr[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// Run runs the fleet for cfg.For under load and faults, lets it settle,
// and checks the invariants. The report's Violations list what failed;
// the error is for a run that could not be made at all.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	r := &run{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)), ledger: filepath.Join(cfg.Dir, "ledger")}
	if err := r.startFleet(); err != nil {
		r.stopFleet()
		return nil, err
	}
	started := time.Now()
	loadCtx, stopLoad := context.WithCancel(ctx)
	loadDone := make(chan struct{})
	go func() { defer close(loadDone); r.load(loadCtx) }()
	r.inject(ctx, started.Add(cfg.For))
	stopLoad()
	<-loadDone
	fmt.Fprintf(cfg.Out, "chaos: %v of load and faults done; waiting up to %v for every task to be final\n", time.Since(started).Round(time.Second), cfg.Settle)
	settled := r.settle(ctx)
	r.stopFleet()
	rep, err := r.check(ctx, settled)
	if err != nil {
		return nil, err
	}
	rep.Took = time.Since(started)
	return rep, nil
}
