package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
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
// its own pool.
type riverQueue struct {
	schema      string
	pool, ipool *pgxpool.Pool
	worker, ins *river.Client[pgx.Tx]
	started     bool
}

func openRiver(ctx context.Context, e *env, schema string, t riverTuning, h handlerFunc) (_ *riverQueue, err error) {
	q := &riverQueue{schema: schema}
	defer func() {
		if err != nil {
			q.close(ctx)
		}
	}()
	if q.pool, err = pgxpool.New(ctx, e.dsn); err != nil {
		return nil, fmt.Errorf("river: connect: %w", err)
	}
	if q.ipool, err = pgxpool.New(ctx, e.dsn); err != nil {
		return nil, fmt.Errorf("river: connect: %w", err)
	}
	if err := migrateRiver(ctx, e, q.pool, schema); err != nil {
		return nil, err
	}
	if q.worker, q.ins, err = riverClients(e, q.pool, q.ipool, schema, t, h); err != nil {
		return nil, err
	}
	return q, nil
}

// riverClients makes the worker client, on pool, and the insert-only
// client, on ipool.
func riverClients(e *env, pool, ipool *pgxpool.Pool, schema string, t riverTuning, h handlerFunc) (worker, ins *river.Client[pgx.Tx], err error) {
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &riverWorker{handle: h}); err != nil {
		return nil, nil, fmt.Errorf("river: add worker: %w", err)
	}
	worker, err = river.NewClient(riverpgxv5.New(pool), &river.Config{
		Schema: schema, Logger: e.logger, Workers: workers,
		Queues:        map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: t.maxWorkers}},
		FetchCooldown: t.fetchCooldown, FetchPollInterval: t.fetchPollInterval,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("river: worker client: %w", err)
	}
	// The insert client's FetchCooldown spaces its insert notifications.
	ins, err = river.NewClient(riverpgxv5.New(ipool), &river.Config{
		Schema: schema, Logger: e.logger, FetchCooldown: t.fetchCooldown,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("river: insert client: %w", err)
	}
	return worker, ins, nil
}

func migrateRiver(ctx context.Context, e *env, pool *pgxpool.Pool, schema string) error {
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: schema, Logger: e.logger})
	if err != nil {
		return fmt.Errorf("river: migrator: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river: migrate schema %s: %w", schema, err)
	}
	return nil
}

func (q *riverQueue) insertBatch(ctx context.Context, jobs []job) error {
	params := make([]river.InsertManyParams, len(jobs))
	for i, j := range jobs {
		params[i] = river.InsertManyParams{Args: riverArgs{j}}
	}
	if _, err := q.ins.InsertManyFast(ctx, params); err != nil {
		return fmt.Errorf("river: insert %d jobs: %w", len(jobs), err)
	}
	return nil
}

func (q *riverQueue) insert(ctx context.Context, j job) error {
	if _, err := q.ins.Insert(ctx, riverArgs{j}, nil); err != nil {
		return fmt.Errorf("river: insert: %w", err)
	}
	return nil
}

func (q *riverQueue) start(ctx context.Context) error {
	if err := q.worker.Start(ctx); err != nil {
		return fmt.Errorf("river: start: %w", err)
	}
	q.started = true
	return nil
}

func (q *riverQueue) completed(ctx context.Context) (int, error) {
	var n int
	sql := `SELECT count(*) FROM ` + pgx.Identifier{q.schema, "river_job"}.Sanitize() + ` WHERE state = 'completed'`
	if err := q.pool.QueryRow(ctx, sql).Scan(&n); err != nil {
		return 0, fmt.Errorf("river: count completed jobs: %w", err)
	}
	return n, nil
}

func (q *riverQueue) close(ctx context.Context) error {
	var err error
	if q.started {
		if err = q.worker.Stop(ctx); err != nil {
			err = fmt.Errorf("river: stop: %w", err)
		}
	}
	for _, p := range []*pgxpool.Pool{q.pool, q.ipool} {
		if p != nil {
			p.Close()
		}
	}
	return err
}
