package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit"
	_ "github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/task"
)

// gritPolicy retries once, a constant retryDelay after the failure.
const gritPolicy = "1 100ms"

func gritSystem(name string, concurrency int) system {
	return system{
		name:   name,
		store:  onPostgres,
		grit:   true,
		config: gritConfig(concurrency),
		open: func(ctx context.Context, e *env, schema string, h handlerFunc) (queue, error) {
			dsn, err := withSchema(e.dsn, schema)
			if err != nil {
				return nil, err
			}
			q, err := openGrit(ctx, e, dsn, concurrency, h)
			if err != nil {
				return nil, err
			}
			tasks := pgx.Identifier{schema, "tasks"}.Sanitize()
			q.count = func(ctx context.Context) (n int, err error) {
				err = e.schemas.pool.QueryRow(ctx, countSucceeded(tasks)).Scan(&n)
				return n, err
			}
			return q, nil
		},
	}
}

// gritSQLiteSystem is grit on its embedded store: both clients open the
// workload's file (the store sets WAL and synchronous=FULL itself), and
// the completed tasks are counted on a connection of their own.
func gritSQLiteSystem(name string, concurrency int) system {
	return system{
		name:   name,
		store:  onSQLite,
		grit:   true,
		config: gritConfig(concurrency) + ", store sqlite:FILE",
		open: func(ctx context.Context, e *env, path string, h handlerFunc) (queue, error) {
			q, err := openGrit(ctx, e, "sqlite:"+path, concurrency, h)
			if err != nil {
				return nil, err
			}
			// After the store has made the file: the count must not.
			db, err := openSQLite(ctx, path, "_pragma=query_only(1)")
			if err != nil {
				q.close(ctx)
				return nil, fmt.Errorf("grit: open the file to count completions: %w", err)
			}
			q.release = db.Close
			q.count = func(ctx context.Context) (n int, err error) {
				err = db.QueryRowContext(ctx, countSucceeded("tasks")).Scan(&n)
				return n, err
			}
			return q, nil
		},
	}
}

func gritConfig(concurrency int) string {
	if concurrency == 0 {
		return "grit.Config{} (Concurrency 10)"
	}
	return fmt.Sprintf("grit Concurrency %d, every other setting default", concurrency)
}

// countSucceeded counts a task table's SUCCESS tasks with the statement
// River's completed jobs are counted with: the store's own counts group
// every task by queue and state, which took twice as long, and the
// throughput clock runs until a count shows every job done.
func countSucceeded(tasks string) string {
	return `SELECT count(*) FROM ` + tasks + ` WHERE state = 'SUCCESS'`
}

// gritQueue is a grit worker client and an insert-only client, each with
// its own store on the same database.
type gritQueue struct {
	worker, ins *grit.Client
	started     bool
	// tenants, when above 0, spreads the jobs over that many tenants, by
	// their Seq, one after another (the many-tenants systems).
	tenants int
	count   func(ctx context.Context) (int, error)
	release func() error // what the count holds, if anything
}

// openGrit opens both clients on dsn, the worker with Concurrency
// concurrency and every other setting its default; the caller sets how the
// completed tasks are counted.
func openGrit(ctx context.Context, e *env, dsn string, concurrency int, h handlerFunc) (*gritQueue, error) {
	return openGritWith(ctx, e, dsn, grit.Config{Concurrency: concurrency, Logger: e.logger}, grit.HandlerConfig{Policy: gritPolicy}, h)
}

// openGritWith opens both clients on dsn, the worker with cfg and its
// handler of jobKind with hc.
func openGritWith(ctx context.Context, e *env, dsn string, cfg grit.Config, hc grit.HandlerConfig, h handlerFunc) (_ *gritQueue, err error) {
	q := &gritQueue{}
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
	ts := make([]task.NewTask, len(jobs))
	for i, j := range jobs {
		args, err := json.Marshal(j)
		if err != nil {
			return err
		}
		ts[i] = task.NewTask{Kind: jobKind, Args: args, RunAt: j.At}
		if q.tenants > 0 {
			ts[i].Tenant = fmt.Sprintf("tenant-%d", j.Seq%q.tenants)
		}
	}
	if _, err := q.ins.EnqueueMany(ctx, ts); err != nil {
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

func (q *gritQueue) completed(ctx context.Context) (int, error) {
	n, err := q.count(ctx)
	if err != nil {
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
	if q.release != nil {
		errs = append(errs, q.release())
	}
	return errors.Join(errs...)
}
