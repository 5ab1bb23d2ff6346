package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/grit-run/grit/store"
)

// QueueCounts counts the tasks of each queue by state.
func (s *Store) QueueCounts(ctx context.Context) ([]store.QueueCount, error) {
	rows, err := s.query(ctx, `SELECT queue, state, count(*) FROM tasks GROUP BY queue, state ORDER BY queue, state`)
	if err != nil {
		return nil, fmt.Errorf("queue counts: %w", err)
	}
	defer rows.Close()
	var out []store.QueueCount
	for rows.Next() {
		var c store.QueueCount
		if err := rows.Scan(&c.Queue, &c.State, &c.N); err != nil {
			return nil, fmt.Errorf("queue counts: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Held counts the RUNNING tasks of each lease owner.
func (s *Store) Held(ctx context.Context) (map[string]int, error) {
	rows, err := s.query(ctx, `SELECT lease_owner, count(*) FROM tasks INDEXED BY tasks_lease_expires
		WHERE state = 'RUNNING' GROUP BY lease_owner`)
	if err != nil {
		return nil, fmt.Errorf("held tasks: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var owner string
		var n int
		if err := rows.Scan(&owner, &n); err != nil {
			return nil, fmt.Errorf("held tasks: %w", err)
		}
		out[owner] = n
	}
	return out, rows.Err()
}

// OldestDue returns, for each of queues with a READY or RETRYING task due
// now, the NextAt of the one due the longest: a walk of tasks_due (by due
// time, then queue) from its start a queue, stopping at the queue's
// first task.
func (s *Store) OldestDue(ctx context.Context, queues []string) (map[string]time.Time, error) {
	now, _ := s.Now(ctx)
	out := map[string]time.Time{}
	for _, q := range queues {
		var at sql.NullInt64
		err := s.queryRow(ctx, `SELECT next_at FROM tasks INDEXED BY tasks_due
			WHERE `+waitingStates+` AND state <> 'SENSING' AND next_at <= ? AND queue = ?
			ORDER BY next_at LIMIT 1`, micros(now), q).Scan(&at)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("oldest due task of queue %q: %w", q, err)
		}
		out[q] = fromMicros(at)
	}
	return out, nil
}

// EnqueuedTotal is the largest task id: SQLite gives a new task the
// largest id plus one, so it counts every task enqueued, unless the
// newest were deleted (pruned), after which their ids are given again.
func (s *Store) EnqueuedTotal(ctx context.Context) (int64, error) {
	var n int64
	if err := s.queryRow(ctx, `SELECT coalesce(max(id), 0) FROM tasks`).Scan(&n); err != nil {
		return 0, fmt.Errorf("tasks enqueued: %w", err)
	}
	return n, nil
}

// DueKinds groups by kind the limit READY and RETRYING tasks due the
// longest, due at or before before: a walk of tasks_due from its start.
func (s *Store) DueKinds(ctx context.Context, before time.Time, limit int) ([]store.KindDue, error) {
	rows, err := s.query(ctx, `SELECT kind, count(*), min(next_at) FROM (
			SELECT kind, next_at FROM tasks INDEXED BY tasks_due
			WHERE `+waitingStates+` AND state <> 'SENSING' AND next_at <= ?
			ORDER BY next_at LIMIT ?)
		GROUP BY kind ORDER BY min(next_at), kind`, micros(before), max(limit, 1))
	if err != nil {
		return nil, fmt.Errorf("kinds of due tasks: %w", err)
	}
	defer rows.Close()
	var out []store.KindDue
	for rows.Next() {
		var k store.KindDue
		var oldest sql.NullInt64
		if err := rows.Scan(&k.Kind, &k.Tasks, &oldest); err != nil {
			return nil, fmt.Errorf("kinds of due tasks: %w", err)
		}
		k.Oldest = fromMicros(oldest)
		out = append(out, k)
	}
	return out, rows.Err()
}
