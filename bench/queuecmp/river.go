package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// riverTuning is what a River system sets; zero fields keep River's
// defaults.
type riverTuning struct {
	maxWorkers        int
	fetchCooldown     time.Duration
	fetchPollInterval time.Duration
}

func riverSystem(name string, t riverTuning) system {
	return system{
		name:   name,
		store:  onPostgres,
		config: t.String(),
		open: func(ctx context.Context, e *env, schema string, h handlerFunc) (queue, error) {
			return openRiver(ctx, e, schema, t, h)
		},
	}
}

func (t riverTuning) String() string {
	s := fmt.Sprintf("River MaxWorkers %d", t.maxWorkers)
	if t.fetchCooldown > 0 {
		s += fmt.Sprintf(", FetchCooldown %s, FetchPollInterval %s", t.fetchCooldown, t.fetchPollInterval)
	} else {
		s += fmt.Sprintf(", default FetchCooldown %s, FetchPollInterval %s", river.FetchCooldownDefault, river.FetchPollIntervalDefault)
	}
	return s
}

// riverArgs are a job's args on River.
type riverArgs struct {
	job
}

func (riverArgs) Kind() string { return jobKind }

type riverWorker struct {
	river.WorkerDefaults[riverArgs]
	handle handlerFunc
}

func (w *riverWorker) Work(_ context.Context, j *river.Job[riverArgs]) error {
	return w.handle(j.Args.job, j.Attempt)
}

// NextRetry makes every retry due retryDelay after the failure.
func (w *riverWorker) NextRetry(*river.Job[riverArgs]) time.Time {
	return time.Now().Add(retryDelay)
}

// riverQueue is a River worker client and an insert-only client, each on
// its own pool, on PostgreSQL (TTx pgx.Tx) or SQLite (*sql.Tx).
type riverQueue[TTx any] struct {
	worker, ins *river.Client[TTx]
	started     bool
	count       func(ctx context.Context) (int, error)
	release     func() // closes the pools
}

// riverOn is where a River system runs: the drivers of the worker's pool
// and of the insert client's, the schema (empty on SQLite) and the count
// of completed jobs.
type riverOn[TTx any] struct {
	worker, ins riverdriver.Driver[TTx]
	schema      string
	count       func(ctx context.Context) (int, error)
	release     func()
}

// newRiver migrates River's tables through the worker's driver and makes
// both clients. On error it releases the pools.
func newRiver[TTx any](ctx context.Context, e *env, on riverOn[TTx], t riverTuning, h handlerFunc) (_ *riverQueue[TTx], err error) {
	q := &riverQueue[TTx]{count: on.count, release: on.release}
	defer func() {
		if err != nil {
			q.close(ctx)
		}
	}()
	m, err := rivermigrate.New(on.worker, &rivermigrate.Config{Schema: on.schema, Logger: e.logger})
	if err != nil {
		return nil, fmt.Errorf("river: migrator: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return nil, fmt.Errorf("river: migrate: %w", err)
	}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &riverWorker{handle: h}); err != nil {
		return nil, fmt.Errorf("river: add worker: %w", err)
	}
	q.worker, err = river.NewClient(on.worker, &river.Config{
		Schema: on.schema, Logger: e.logger, Workers: workers,
		Queues:        map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: t.maxWorkers}},
		FetchCooldown: t.fetchCooldown, FetchPollInterval: t.fetchPollInterval,
	})
	if err != nil {
		return nil, fmt.Errorf("river: worker client: %w", err)
	}
	// The insert client's FetchCooldown spaces its insert notifications.
	q.ins, err = river.NewClient(on.ins, &river.Config{
		Schema: on.schema, Logger: e.logger, FetchCooldown: t.fetchCooldown,
	})
	if err != nil {
		return nil, fmt.Errorf("river: insert client: %w", err)
	}
	return q, nil
}

func openRiver(ctx context.Context, e *env, schema string, t riverTuning, h handlerFunc) (*riverQueue[pgx.Tx], error) {
	pool, err := pgxpool.New(ctx, e.dsn)
	if err != nil {
		return nil, fmt.Errorf("river: connect: %w", err)
	}
	ipool, err := pgxpool.New(ctx, e.dsn)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("river: connect: %w", err)
	}
	jobs := pgx.Identifier{schema, "river_job"}.Sanitize()
	return newRiver(ctx, e, riverOn[pgx.Tx]{
		worker: riverpgxv5.New(pool), ins: riverpgxv5.New(ipool), schema: schema,
		count: func(ctx context.Context) (n int, err error) {
			err = pool.QueryRow(ctx, countCompleted(jobs)).Scan(&n)
			return n, err
		},
		release: func() { pool.Close(); ipool.Close() },
	}, t, h)
}

func countCompleted(jobs string) string {
	return `SELECT count(*) FROM ` + jobs + ` WHERE state = 'completed'`
}

func (q *riverQueue[TTx]) insertBatch(ctx context.Context, jobs []job) error {
	params := make([]river.InsertManyParams, len(jobs))
	for i, j := range jobs {
		params[i] = river.InsertManyParams{Args: riverArgs{j}}
		if !j.At.IsZero() {
			params[i].InsertOpts = &river.InsertOpts{ScheduledAt: j.At}
		}
	}
	if _, err := q.ins.InsertManyFast(ctx, params); err != nil {
		return fmt.Errorf("river: insert %d jobs: %w", len(jobs), err)
	}
	return nil
}

func (q *riverQueue[TTx]) insert(ctx context.Context, j job) error {
	if _, err := q.ins.Insert(ctx, riverArgs{j}, nil); err != nil {
		return fmt.Errorf("river: insert: %w", err)
	}
	return nil
}

func (q *riverQueue[TTx]) start(ctx context.Context) error {
	if err := q.worker.Start(ctx); err != nil {
		return fmt.Errorf("river: start: %w", err)
	}
	q.started = true
	return nil
}

func (q *riverQueue[TTx]) completed(ctx context.Context) (int, error) {
	n, err := q.count(ctx)
	if err != nil {
		return 0, fmt.Errorf("river: count completed jobs: %w", err)
	}
	return n, nil
}

func (q *riverQueue[TTx]) close(ctx context.Context) error {
	var err error
	if q.started {
		if err = q.worker.Stop(ctx); err != nil {
			err = fmt.Errorf("river: stop: %w", err)
		}
	}
	if q.release != nil {
		q.release()
	}
	return err
}
