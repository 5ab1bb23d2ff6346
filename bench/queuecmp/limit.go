package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The limit: the least a PostgreSQL queue can do per job, with no
// library. Workers claim a batch with one UPDATE … WHERE id IN (SELECT …
// FOR UPDATE SKIP LOCKED LIMIT n) RETURNING, run its jobs, and complete
// the batch with a second UPDATE (a failed job is made available again
// retryDelay later), each statement its own commit. An insert notifies
// through pg_notify; an idle worker waits for a notification or for the
// earliest job due, at most limitIdle. No lease, no heartbeat, no attempt
// record, no retry policy: what a queue cannot do without is all there is.
const (
	limitWorkers = 2    // connections claiming at once
	limitBatch   = 1000 // jobs a claim takes
)

func limitSystem() system {
	return system{
		name:   "pg-limit",
		store:  onPostgres,
		config: fmt.Sprintf("no library: %d workers, claims of %d by UPDATE … FOR UPDATE SKIP LOCKED RETURNING and completions of a batch, each its own commit", limitWorkers, limitBatch),
		open: func(ctx context.Context, e *env, schema string, h handlerFunc) (queue, error) {
			return openLimit(ctx, e, schema, h)
		},
	}
}

type limitQueue struct {
	db      *pgxpool.Pool
	jobs    string // the schema's job table, quoted
	channel string
	handle  handlerFunc

	cancel context.CancelFunc
	wg     sync.WaitGroup
	wake   chan struct{}
}

func openLimit(ctx context.Context, e *env, schema string, h handlerFunc) (*limitQueue, error) {
	cfg, err := pgxpool.ParseConfig(e.dsn)
	if err != nil {
		return nil, fmt.Errorf("pg-limit: %w", err)
	}
	cfg.MaxConns = limitWorkers + 3 // the workers, the listener, the inserts and the counts
	db, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pg-limit: %w", err)
	}
	q := &limitQueue{db: db, jobs: pgx.Identifier{schema, "jobs"}.Sanitize(), channel: schema, handle: h, wake: make(chan struct{}, limitWorkers)}
	_, err = q.db.Exec(ctx, `CREATE TABLE `+q.jobs+` (
		id bigserial PRIMARY KEY, state text NOT NULL DEFAULT 'available', args jsonb NOT NULL,
		attempt int NOT NULL DEFAULT 0, run_at timestamptz NOT NULL DEFAULT now());
		CREATE INDEX ON `+q.jobs+` (run_at, id) WHERE state = 'available'`)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("pg-limit: create the job table: %w", err)
	}
	return q, nil
}

func (q *limitQueue) insertBatch(ctx context.Context, jobs []job) error {
	rows := make([][]any, len(jobs))
	for i, j := range jobs {
		b, err := json.Marshal(j)
		if err != nil {
			return err
		}
		rows[i] = []any{string(b), dueAt(j)}
	}
	_, err := q.db.CopyFrom(ctx, pgx.Identifier{q.channel, "jobs"}, []string{"args", "run_at"}, pgx.CopyFromRows(rows))
	return err
}

func (q *limitQueue) insert(ctx context.Context, j job) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	_, err = q.db.Exec(ctx, `WITH i AS (INSERT INTO `+q.jobs+` (args) VALUES ($1)) SELECT pg_notify($2, '')`, string(b), q.channel)
	return err
}

func (q *limitQueue) start(ctx context.Context) error {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	q.cancel = cancel
	conn, err := q.db.Acquire(ctx)
	if err != nil {
		cancel()
		return err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{q.channel}.Sanitize()); err != nil {
		conn.Release()
		cancel()
		return err
	}
	q.wg.Go(func() {
		defer conn.Release()
		for {
			if _, err := conn.Conn().WaitForNotification(rctx); err != nil {
				return
			}
			for range limitWorkers {
				select {
				case q.wake <- struct{}{}:
				default:
				}
			}
		}
	})
	for range limitWorkers {
		q.wg.Go(func() { q.work(rctx) })
	}
	return nil
}

// work claims, runs and completes batches until ctx ends.
func (q *limitQueue) work(ctx context.Context) {
	for ctx.Err() == nil {
		n, err := q.batch(ctx)
		if err != nil || n > 0 {
			continue
		}
		var next time.Time
		if q.db.QueryRow(ctx, `SELECT min(run_at) FROM `+q.jobs+` WHERE state = 'available'`).Scan(&next) != nil {
			next = time.Time{}
		}
		idleWait(ctx, q.wake, next)
	}
}

// limitIdle is the longest an idle limit worker waits without a wake.
const limitIdle = 50 * time.Millisecond

// idleWait waits, after a claim found nothing, for a wake, for the
// earliest available job's due time next (zero: none), at most limitIdle,
// or for ctx.
func idleWait(ctx context.Context, wake <-chan struct{}, next time.Time) {
	wait := limitIdle
	if !next.IsZero() {
		wait = min(wait, max(time.Until(next), 0))
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-wake:
	case <-t.C:
	}
}

// claimedJob is one row a claim returned.
type claimedJob struct {
	id      int64
	args    []byte
	attempt int
}

// scanClaimed reads a claim's rows (id, args, attempt).
func scanClaimed(rows interface {
	Next() bool
	Scan(dest ...any) error
}) ([]claimedJob, error) {
	var js []claimedJob
	for rows.Next() {
		var j claimedJob
		if err := rows.Scan(&j.id, &j.args, &j.attempt); err != nil {
			return js, err
		}
		js = append(js, j)
	}
	return js, nil
}

// runClaimed runs the jobs of a claimed batch and tells those that
// succeeded from those that failed.
func runClaimed(js []claimedJob, h handlerFunc) (done, failed []int64) {
	for _, c := range js {
		var j job
		if json.Unmarshal(c.args, &j) == nil && h(j, c.attempt) == nil {
			done = append(done, c.id)
		} else {
			failed = append(failed, c.id)
		}
	}
	return done, failed
}

func (q *limitQueue) batch(ctx context.Context) (int, error) {
	rows, err := q.db.Query(ctx, `UPDATE `+q.jobs+` SET state = 'running', attempt = attempt + 1
		WHERE id IN (SELECT id FROM `+q.jobs+` WHERE state = 'available' AND run_at <= now() ORDER BY run_at, id LIMIT $1 FOR UPDATE SKIP LOCKED)
		RETURNING id, args, attempt`, limitBatch)
	if err != nil {
		return 0, err
	}
	js, err := scanClaimed(rows)
	rows.Close()
	if err == nil {
		err = rows.Err()
	}
	if err != nil || len(js) == 0 {
		return 0, err
	}
	n := len(js)
	done, failed := runClaimed(js, q.handle)
	_, err = q.db.Exec(ctx, `WITH d AS (UPDATE `+q.jobs+` SET state = 'completed' WHERE id = ANY($1))
		UPDATE `+q.jobs+` SET state = 'available', run_at = now() + $3 * interval '1 millisecond' WHERE id = ANY($2)`,
		done, failed, retryDelay.Milliseconds())
	return n, err
}

func (q *limitQueue) completed(ctx context.Context) (int, error) {
	var n int
	err := q.db.QueryRow(ctx, `SELECT count(*) FROM `+q.jobs+` WHERE state = 'completed'`).Scan(&n)
	return n, err
}

func (q *limitQueue) close(ctx context.Context) error {
	if q.cancel != nil {
		q.cancel()
	}
	done := make(chan struct{})
	go func() { q.wg.Wait(); close(done) }()
	defer q.db.Close()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.New("pg-limit: workers did not stop")
	}
}
