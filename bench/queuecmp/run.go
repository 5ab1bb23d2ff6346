package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
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
	rep.Params = params{Jobs: o.jobs, Rounds: o.rounds, LatencyJobs: o.latencyJobs, RetryJobs: o.retryJobs, PaceMs: ms(pace), RetryDelayMs: ms(retryDelay),
		Backlog: o.backlog, Future: o.future}
	rep.Machine = readHost()
	e := &env{
		dsn:    o.db,
		logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),

		cpuprofile: o.cpuprofile,
	}
	if uses(o.systems, onPostgres) {
		pool, err := connect(ctx, o.db)
		if err != nil {
			return report{}, err
		}
		defer pool.Close()
		if err := readPostgres(ctx, pool, &rep.Machine); err != nil {
			return report{}, err
		}
		e.schemas, e.server = newSchemas(pool), findServer(ctx, pool)
		defer func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupLimit)
			defer cancel()
			err = errors.Join(err, e.schemas.dropAll(cctx))
		}()
	}
	if uses(o.systems, onSQLite) {
		if e.files, err = newFiles(); err != nil {
			return report{}, err
		}
		defer func() { err = errors.Join(err, e.files.removeAll()) }()
		if err := readSQLite(ctx, e.files.dir, &rep.Machine); err != nil {
			return report{}, err
		}
	}
	tps, err := throughputRounds(ctx, e, o, stderr)
	if err != nil {
		return report{}, err
	}
	for i, sys := range o.systems {
		res, err := measureLatencies(ctx, e, sys, o, stderr)
		if err != nil {
			return report{}, fmt.Errorf("%s: %w", sys.name, err)
		}
		res.Throughput = tps[i]
		if o.backlog > 0 {
			if err := measureBacklog(ctx, e, sys, o, stderr, &res); err != nil {
				return report{}, fmt.Errorf("%s: %w", sys.name, err)
			}
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

// throughputRounds runs the throughput workload o.rounds times on every
// system, the systems taking turns within each round, so that each
// system's runs are spread over the same stretch of time: the machine's
// speed, which drifts on a shared machine, falls alike on all of them. A
// run of a fast system lasts a fraction of a second, where one slow moment
// of the machine moves its figure by a fifth. Each system's result is its
// median run. Only the first round writes --cpuprofile.
func throughputRounds(ctx context.Context, e *env, o options, stderr io.Writer) ([]throughputResult, error) {
	runs := make([][]throughputResult, len(o.systems))
	for round := range o.rounds {
		for i, sys := range o.systems {
			var tp throughputResult
			var err error
			bounded(ctx, o.jobs, func(ctx context.Context) { tp, err = throughput(ctx, e, sys, o.jobs, round == 0) })
			if err != nil {
				return nil, fmt.Errorf("%s: throughput: %w", sys.name, err)
			}
			fmt.Fprintf(stderr, "queuecmp: %s throughput, round %d of %d: %d jobs in %.2fs (%.0f jobs/s), the first %.0f ms after the start\n",
				sys.name, round+1, o.rounds, o.jobs, tp.Seconds, tp.JobsPerSec, tp.FirstJobMs)
			runs[i] = append(runs[i], tp)
		}
	}
	out := make([]throughputResult, len(runs))
	for i, rs := range runs {
		out[i] = medianRun(rs)
	}
	return out, nil
}

// medianRun is the run with the median jobs/s (of an even number of runs,
// the slower of the middle two), with every run's jobs/s, in round order.
func medianRun(rs []throughputResult) throughputResult {
	sorted := slices.Clone(rs)
	slices.SortStableFunc(sorted, func(a, b throughputResult) int { return cmp.Compare(a.JobsPerSec, b.JobsPerSec) })
	m := sorted[(len(sorted)-1)/2]
	m.Rounds = make([]float64, len(rs))
	for i, r := range rs {
		m.Rounds[i] = r.JobsPerSec
	}
	return m
}

// measureLatencies runs the enqueue-to-start and retry lateness workloads
// on one system.
func measureLatencies(ctx context.Context, e *env, sys system, o options, stderr io.Writer) (result, error) {
	res := result{System: sys.name, Config: sys.config}
	var err error
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
	if o.future > 0 {
		var d dist
		bounded(ctx, o.latencyJobs+o.future, func(ctx context.Context) { d, err = latencyBehindFuture(ctx, e, sys, o.latencyJobs, o.future) })
		if err != nil {
			return res, fmt.Errorf("latency behind %d future jobs: %w", o.future, err)
		}
		res.Future, res.FutureRatio = &d, over(d.P99, res.Latency.P99)
		fmt.Fprintf(stderr, "queuecmp: %s enqueue→start behind %d jobs due in an hour: p99 %.2fms\n", sys.name, o.future, d.P99)
	}
	return res, nil
}

// measureBacklog drains --backlog jobs due before the worker starts, once,
// and compares its rate with the throughput workload's.
func measureBacklog(ctx context.Context, e *env, sys system, o options, stderr io.Writer, res *result) error {
	var tp throughputResult
	var err error
	bounded(ctx, o.backlog, func(ctx context.Context) { tp, err = throughput(ctx, e, sys, o.backlog, false) })
	if err != nil {
		return fmt.Errorf("backlog drain: %w", err)
	}
	res.Backlog, res.BacklogRatio = &tp, over(tp.JobsPerSec, res.Throughput.JobsPerSec)
	fmt.Fprintf(stderr, "queuecmp: %s backlog drain: %d jobs in %.2fs (%.0f jobs/s)\n", sys.name, o.backlog, tp.Seconds, tp.JobsPerSec)
	return nil
}

// bounded runs fn under the time limit of a workload of n jobs.
func bounded(ctx context.Context, n int, fn func(ctx context.Context)) {
	d := limit(n)
	ctx, cancel := context.WithTimeoutCause(ctx, d, fmt.Errorf("the workload's time limit of %s passed", d))
	defer cancel()
	fn(ctx)
}
