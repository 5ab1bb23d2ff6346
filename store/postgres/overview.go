package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/store"
)

// QueueCounts counts the tasks of each queue by state.
func (s *Store) QueueCounts(ctx context.Context) ([]store.QueueCount, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT queue, state, count(*) FROM $S.tasks GROUP BY queue, state ORDER BY queue, state`))
	if err != nil {
		return nil, fmt.Errorf("queue counts: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.QueueCount, error) {
		var c store.QueueCount
		err := r.Scan(&c.Queue, &c.State, &c.N)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("queue counts: %w", err)
	}
	return out, nil
}

// Held counts the RUNNING tasks of each lease owner.
func (s *Store) Held(ctx context.Context) (map[string]int, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT lease_owner, count(*) FROM $S.tasks WHERE state = 'RUNNING' GROUP BY lease_owner`))
	if err != nil {
		return nil, fmt.Errorf("held tasks: %w", err)
	}
	out := map[string]int{}
	var owner string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&owner, &n}, func() error { out[owner] = n; return nil })
	if err != nil {
		return nil, fmt.Errorf("held tasks: %w", err)
	}
	return out, nil
}

// OldestDue returns, for each of queues with a READY or RETRYING task due
// now, the NextAt of the one due the longest: a walk of tasks_due from
// its start a queue, stopping at the queue's first task.
func (s *Store) OldestDue(ctx context.Context, queues []string) (map[string]time.Time, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT q.queue, (SELECT t.next_at FROM $S.tasks t
			WHERE t.state IN ('READY', 'RETRYING') AND t.queue = q.queue AND t.next_at <= now()
			ORDER BY t.next_at LIMIT 1)
		FROM unnest($1::text[]) AS q (queue)`), queues)
	if err != nil {
		return nil, fmt.Errorf("oldest due tasks: %w", err)
	}
	out := map[string]time.Time{}
	var queue string
	var at *time.Time
	_, err = pgx.ForEachRow(rows, []any{&queue, &at}, func() error {
		if at != nil {
			out[queue] = *at
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("oldest due tasks: %w", err)
	}
	return out, nil
}

// EnqueuedTotal is the tasks' id sequence's last value: every id Enqueue
// and SubmitRun drew, committed or not (an enqueue rolled back leaves a
// gap, and is counted).
func (s *Store) EnqueuedTotal(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, s.sql(`SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM $S.tasks_id_seq`)).Scan(&n); err != nil {
		return 0, fmt.Errorf("tasks enqueued: %w", err)
	}
	return n, nil
}

// DueKinds groups by kind the limit READY and RETRYING tasks due the
// longest, due at or before before: a walk of tasks_due from its start.
func (s *Store) DueKinds(ctx context.Context, before time.Time, limit int) ([]store.KindDue, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT kind, count(*), min(next_at) FROM (
			SELECT kind, next_at FROM $S.tasks
			WHERE state IN ('READY', 'RETRYING') AND next_at <= $1
			ORDER BY next_at LIMIT $2) d
		GROUP BY kind ORDER BY min(next_at), kind`), before, max(limit, 1))
	if err != nil {
		return nil, fmt.Errorf("kinds of due tasks: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[store.KindDue])
	if err != nil {
		return nil, fmt.Errorf("kinds of due tasks: %w", err)
	}
	return out, nil
}
