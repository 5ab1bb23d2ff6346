package sqlite

import (
	"context"
	"fmt"
	"time"
)

// successDurationsSQL finds the newest SUCCESS tasks of a kind and name
// through tasks_success (0007), then each one's successful attempt: a
// plain success's is on the task row (started_at to finished_at, see
// succeedSQL), any other's is the task's SUCCESS row in attempts, found
// by its primary key (a task succeeds once, so it has one at most). Only
// a success ends a task in SUCCESS, so these are the newest successful
// attempts; they are put in the order they ended, which for the second
// kind is the worker's end rather than the store's record of it.
const successDurationsSQL = `SELECT coalesce(a.ended_at, t.finished_at) - coalesce(a.started_at, t.started_at)
FROM (
	SELECT id, started_at, finished_at FROM tasks INDEXED BY tasks_success
	WHERE state = 'SUCCESS' AND kind = ? AND name = ?
	ORDER BY finished_at DESC LIMIT ?
) t
LEFT JOIN attempts a ON a.task_id = t.id AND t.started_at IS NULL AND a.outcome = 'SUCCESS'
WHERE coalesce(a.started_at, t.started_at) IS NOT NULL
ORDER BY coalesce(a.ended_at, t.finished_at) DESC`

// SuccessDurations returns the durations of the newest successful attempts
// of tasks of kind and name, at most limit of them, newest first.
func (s *Store) SuccessDurations(ctx context.Context, kind, name string, limit int) ([]time.Duration, error) {
	rows, err := s.query(ctx, successDurationsSQL, kind, name, max(limit, 1))
	if err != nil {
		return nil, fmt.Errorf("success durations of %s %q: %w", kind, name, err)
	}
	defer rows.Close()
	var out []time.Duration
	for rows.Next() {
		var micros int64
		if err := rows.Scan(&micros); err != nil {
			return nil, err
		}
		out = append(out, time.Duration(micros)*time.Microsecond)
	}
	return out, rows.Err()
}
