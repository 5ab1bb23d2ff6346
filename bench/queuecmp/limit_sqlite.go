package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// The limit on SQLite: the least a SQLite queue can do per job, with no
// library and the durability of the other SQLite systems
// (sqliteSettings). pg-limit's job table, on one write connection: a
// worker claims a batch with one UPDATE … WHERE id IN (SELECT … LIMIT n)
// RETURNING, runs its jobs, and completes the batch with a second UPDATE
// (a failed job is made available again retryDelay later), each in a
// transaction of its own (BEGIN IMMEDIATE). SQLite has one writer, so one
// worker: a second would only wait for the first's lock. An insert wakes
// the worker in process; an idle worker waits for that, or for the
// earliest job due, at most limitIdle.
//
// Batches of 1000, from a sweep the package comment gives: the larger the
// batch, the fewer commits, but a batch larger than what grit's or River's
// worker holds at once measures the batch, not the queue.
const sqliteLimitBatch = 1000

func sqliteLimitSystem() system {
	return system{
		name:  "sqlite-limit",
		store: onSQLite,
		config: fmt.Sprintf("no library: 1 worker on one write connection, claims of %d by UPDATE … RETURNING and completions of a batch, "+
			"each its own BEGIN IMMEDIATE transaction", sqliteLimitBatch),
		open: func(ctx context.Context, e *env, path string, h handlerFunc) (queue, error) {
			return openSQLiteLimit(ctx, path, h)
		},
	}
}

type sqliteLimitQueue struct {
	db     *sql.DB // the one write connection
	count  *sql.DB // a read connection for completed
	handle handlerFunc

	cancel context.CancelFunc
	wg     sync.WaitGroup
	wake   chan struct{}
}

func openSQLiteLimit(ctx context.Context, path string, h handlerFunc) (*sqliteLimitQueue, error) {
	db, err := openSQLite(ctx, path, "_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlite-limit: %w", err)
	}
	_, err = db.ExecContext(ctx, `CREATE TABLE jobs (
		id INTEGER PRIMARY KEY, state TEXT NOT NULL DEFAULT 'available', args BLOB NOT NULL,
		attempt INTEGER NOT NULL DEFAULT 0, run_at INTEGER NOT NULL);
		CREATE INDEX jobs_available ON jobs (run_at, id) WHERE state = 'available'`)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite-limit: create the job table: %w", err)
	}
	count, err := openSQLite(ctx, path, "_pragma=query_only(1)")
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite-limit: %w", err)
	}
	return &sqliteLimitQueue{db: db, count: count, handle: h, wake: make(chan struct{}, 1)}, nil
}

// micros is the time jobs are due at: Unix microseconds.
func micros(t time.Time) int64 { return t.UnixMicro() }

func (q *sqliteLimitQueue) insertBatch(ctx context.Context, jobs []job) error {
	tx, err := q.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO jobs (args, run_at) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		b, err := json.Marshal(j)
		if err != nil {
			return err
		}
		if _, err := st.ExecContext(ctx, b, micros(dueAt(j))); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	q.signal()
	return nil
}

func (q *sqliteLimitQueue) insert(ctx context.Context, j job) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if _, err := q.db.ExecContext(ctx, `INSERT INTO jobs (args, run_at) VALUES (?, ?)`, b, micros(time.Now())); err != nil {
		return err
	}
	q.signal()
	return nil
}

func (q *sqliteLimitQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *sqliteLimitQueue) start(ctx context.Context) error {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	q.cancel = cancel
	q.wg.Go(func() { q.work(rctx) })
	return nil
}

// work claims, runs and completes batches until ctx ends.
func (q *sqliteLimitQueue) work(ctx context.Context) {
	for ctx.Err() == nil {
		n, err := q.batch(ctx)
		if err != nil || n > 0 {
			continue
		}
		var next sql.NullInt64
		_ = q.db.QueryRowContext(ctx, `SELECT min(run_at) FROM jobs WHERE state = 'available'`).Scan(&next)
		due := time.Time{}
		if next.Valid {
			due = time.UnixMicro(next.Int64)
		}
		idleWait(ctx, q.wake, due)
	}
}

func (q *sqliteLimitQueue) batch(ctx context.Context) (int, error) {
	js, err := q.claim(ctx)
	if err != nil || len(js) == 0 {
		return 0, err
	}
	done, failed := runClaimed(js, q.handle)
	return len(js), q.complete(ctx, done, failed)
}

// claim claims a batch, in its own transaction.
func (q *sqliteLimitQueue) claim(ctx context.Context) ([]claimedJob, error) {
	tx, err := q.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `UPDATE jobs SET state = 'running', attempt = attempt + 1
		WHERE id IN (SELECT id FROM jobs WHERE state = 'available' AND run_at <= ? ORDER BY run_at, id LIMIT ?)
		RETURNING id, args, attempt`, micros(time.Now()), sqliteLimitBatch)
	if err != nil {
		return nil, err
	}
	js, err := scanClaimed(rows)
	rows.Close()
	if err := errors.Join(err, rows.Err()); err != nil {
		return nil, err
	}
	return js, tx.Commit()
}

// complete writes a batch's outcome in one UPDATE, its own transaction.
func (q *sqliteLimitQueue) complete(ctx context.Context, done, failed []int64) error {
	tx, err := q.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `UPDATE jobs SET
		state = CASE WHEN id IN (SELECT value FROM json_each(?1)) THEN 'available' ELSE 'completed' END,
		run_at = CASE WHEN id IN (SELECT value FROM json_each(?1)) THEN ?2 ELSE run_at END
		WHERE id IN (SELECT value FROM json_each(?3))`,
		jsonIDs(failed), micros(time.Now().Add(retryDelay)), jsonIDs(append(done, failed...)))
	if err != nil {
		return err
	}
	return tx.Commit()
}

// jsonIDs is ids as a JSON array, which json_each reads.
func jsonIDs(ids []int64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, id)
	}
	b.WriteByte(']')
	return b.String()
}

func (q *sqliteLimitQueue) completed(ctx context.Context) (int, error) {
	var n int
	err := q.count.QueryRowContext(ctx, `SELECT count(*) FROM jobs WHERE state = 'completed'`).Scan(&n)
	return n, err
}

func (q *sqliteLimitQueue) close(ctx context.Context) error {
	if q.cancel != nil {
		q.cancel()
	}
	done := make(chan struct{})
	go func() { q.wg.Wait(); close(done) }()
	defer func() { q.db.Close(); q.count.Close() }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.New("sqlite-limit: the worker did not stop")
	}
}
