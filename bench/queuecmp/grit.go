package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/store"
	_ "github.com/grit-run/grit/store/postgres"
)

// gritPolicy retries once, a constant retryDelay after the failure.
const gritPolicy = "1 100ms"

func gritSystem(name string, concurrency int) system {
	cfg := fmt.Sprintf("grit Concurrency %d, every other setting default", concurrency)
	if concurrency == 0 {
		cfg = "grit.Config{} (Concurrency 10)"
	}
	return system{
		name:   name,
		grit:   true,
		config: cfg,
		open: func(ctx context.Context, e *env, schema string, h handlerFunc) (queue, error) {
			return openGritWith(ctx, e, schema, grit.Config{Concurrency: concurrency, Logger: e.logger}, grit.HandlerConfig{Policy: gritPolicy}, h)
		},
	}
}

// gritQueue is a grit worker client and an insert-only client, each with
// its own store on the same schema.
type gritQueue struct {
	worker, ins *grit.Client
	started     bool
	// tasks is the schema's task table and db the pool that counts its
	// completed tasks, as River's are counted.
	tasks string
	db    *pgxpool.Pool
	// onClose, when set, closes what the system made besides its
	// clients (grit-features' tracer provider).
	onClose func() error
}

// openGritWith opens a grit worker with cfg, whose handler of jobKind has
// hc, and an insert-only client.
func openGritWith(ctx context.Context, e *env, schema string, cfg grit.Config, hc grit.HandlerConfig, h handlerFunc) (_ *gritQueue, err error) {
	dsn, err := withSchema(e.dsn, schema)
	if err != nil {
		return nil, err
	}
	q := &gritQueue{tasks: pgx.Identifier{schema, "tasks"}.Sanitize(), db: e.schemas.pool}
	defer func() {
		if err != nil {
			q.close(ctx)
		}
	}()
	if q.worker, err = grit.Open(ctx, dsn, cfg); err != nil {
		return nil, fmt.Errorf("grit: open worker: %w", err)
	}
	err = grit.Handle(q.worker, jobKind, func(ctx context.Context, j job) error {
		a, _ := grit.AttemptFrom(ctx)
		return h(j, a.Number)
	}, hc)
	if err != nil {
		return nil, err
	}
	if q.ins, err = grit.Open(ctx, dsn, grit.Config{Logger: e.logger}); err != nil {
		return nil, fmt.Errorf("grit: open insert client: %w", err)
	}
	return q, nil
}

// withSchema adds grit's schema parameter to a PostgreSQL URL.
func withSchema(dsn, schema string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("grit: --db is not a URL: %w", err)
	}
	v := u.Query()
	v.Set("schema", schema)
	u.RawQuery = v.Encode()
	return u.String(), nil
}

func (q *gritQueue) insertBatch(ctx context.Context, jobs []job) error {
	ts := make([]store.NewTask, len(jobs))
	for i, j := range jobs {
		args, err := json.Marshal(j)
		if err != nil {
			return err
		}
		ts[i] = store.NewTask{Kind: jobKind, Args: args}
	}
	if _, err := q.ins.Store().Enqueue(ctx, ts); err != nil {
		return fmt.Errorf("grit: insert %d jobs: %w", len(jobs), err)
	}
	return nil
}

func (q *gritQueue) insert(ctx context.Context, j job) error {
	if _, err := q.ins.Enqueue(ctx, jobKind, j); err != nil {
		return fmt.Errorf("grit: insert: %w", err)
	}
	return nil
}

func (q *gritQueue) start(ctx context.Context) error {
	if err := q.worker.Start(ctx); err != nil {
		return fmt.Errorf("grit: start: %w", err)
	}
	q.started = true
	return nil
}

// completed counts the schema's SUCCESS tasks with the statement River's
// completed jobs are counted with: the store's own counts group every task
// by queue and state, which took twice as long, and the throughput clock
// runs until a count shows every job done.
func (q *gritQueue) completed(ctx context.Context) (int, error) {
	var n int
	if err := q.db.QueryRow(ctx, `SELECT count(*) FROM `+q.tasks+` WHERE state = 'SUCCESS'`).Scan(&n); err != nil {
		return 0, fmt.Errorf("grit: count completed tasks: %w", err)
	}
	return n, nil
}

func (q *gritQueue) close(ctx context.Context) error {
	var errs []error
	if q.started {
		if err := q.worker.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("grit: stop: %w", err))
		}
	}
	for _, c := range []*grit.Client{q.worker, q.ins} {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	if q.onClose != nil {
		errs = append(errs, q.onClose())
	}
	return errors.Join(errs...)
}
