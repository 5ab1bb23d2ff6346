package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// run is the whole program: it returns the exit code, 2 for bad flags.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	var pe parseError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &pe): // the flag package has printed it
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "queuecmp: %v\n", err)
		return 2
	}
	rep, err := measure(ctx, o, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "queuecmp: %v\n", err)
		return 1
	}
	if o.json {
		err = rep.writeJSON(stdout)
	} else {
		err = rep.writeTable(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "queuecmp: %v\n", err)
		return 1
	}
	return 0
}

// measure runs every workload on every system, one at a time.
func measure(ctx context.Context, o options, stderr io.Writer) (rep report, err error) {
	pool, err := connect(ctx, o.db)
	if err != nil {
		return report{}, err
	}
	defer pool.Close()
	rep.Params = params{Jobs: o.jobs, LatencyJobs: o.latencyJobs, RetryJobs: o.retryJobs, PaceMs: ms(pace), RetryDelayMs: ms(retryDelay)}
	if rep.Machine, err = readMachine(ctx, pool); err != nil {
		return report{}, err
	}
	e := &env{
		dsn:     o.db,
		logger:  slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		schemas: newSchemas(pool),
		server:  findServer(ctx, pool),

		cpuprofile: o.cpuprofile,
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupLimit)
		defer cancel()
		err = errors.Join(err, e.schemas.dropAll(cctx))
	}()
	for _, sys := range o.systems {
		res, err := measureSystem(ctx, e, sys, o, stderr)
		if err != nil {
			return report{}, fmt.Errorf("%s: %w", sys.name, err)
		}
		rep.Systems = append(rep.Systems, res)
	}
	rep.Ratios = ratios(o.systems, rep.Systems)
	return rep, nil
}

// connect opens the pool that creates and drops the schemas, and checks
// that PostgreSQL answers.
func connect(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("--db: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("PostgreSQL at --db does not answer (is it running?): %w", err)
	}
	return pool, nil
}

func measureSystem(ctx context.Context, e *env, sys system, o options, stderr io.Writer) (result, error) {
	res := result{System: sys.name, Config: sys.config}
	var err error
	bounded(ctx, o.jobs, func(ctx context.Context) {
		res.Throughput, err = throughput(ctx, e, sys, o.jobs)
	})
	if err != nil {
		return res, fmt.Errorf("throughput: %w", err)
	}
	fmt.Fprintf(stderr, "queuecmp: %s throughput: %d jobs in %.2fs, the first %.0f ms after the start\n", sys.name, o.jobs, res.Throughput.Seconds, res.Throughput.FirstJobMs)
	bounded(ctx, o.latencyJobs, func(ctx context.Context) { res.Latency, err = latency(ctx, e, sys, o.latencyJobs) })
	if err != nil {
		return res, fmt.Errorf("latency: %w", err)
	}
	fmt.Fprintf(stderr, "queuecmp: %s enqueue→start: p99 %.2fms\n", sys.name, res.Latency.P99)
	bounded(ctx, o.retryJobs, func(ctx context.Context) { res.Retry, err = retryLateness(ctx, e, sys, o.retryJobs) })
	if err != nil {
		return res, fmt.Errorf("retry lateness: %w", err)
	}
	fmt.Fprintf(stderr, "queuecmp: %s retry lateness: p99 %.2fms\n", sys.name, res.Retry.P99)
	return res, nil
}

// bounded runs fn under the time limit of a workload of n jobs.
func bounded(ctx context.Context, n int, fn func(ctx context.Context)) {
	d := limit(n)
	ctx, cancel := context.WithTimeoutCause(ctx, d, fmt.Errorf("the workload's time limit of %s passed", d))
	defer cancel()
	fn(ctx)
}
