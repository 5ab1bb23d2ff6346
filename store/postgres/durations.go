package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// successDurationsSQL finds the newest SUCCESS tasks of a kind and name
// through tasks_success (0016), then each one's successful attempt: a
// plain success's is on the task row (started_at to finished_at, see
// succeedSQL), any other's is the task's SUCCESS row in attempts, found
// by its primary key. Only a success ends a task in SUCCESS, so these are
// the newest successful attempts; they are put in the order they ended,
// which for the second kind is the worker's end rather than the
// database's record of it.
const successDurationsSQL = `SELECT (extract(epoch FROM coalesce(a.ended_at, t.finished_at) - coalesce(a.started_at, t.started_at)) * 1000000)::bigint
FROM (
	SELECT id, started_at, finished_at FROM $S.tasks
	WHERE kind = $1 AND name = $2 AND state = 'SUCCESS'
	ORDER BY finished_at DESC LIMIT $3
) t
LEFT JOIN LATERAL (
	SELECT started_at, ended_at FROM $S.attempts
	WHERE task_id = t.id AND t.started_at IS NULL AND outcome = 'SUCCESS'
	ORDER BY lease_token DESC LIMIT 1
) a ON true
WHERE coalesce(a.started_at, t.started_at) IS NOT NULL
ORDER BY coalesce(a.ended_at, t.finished_at) DESC`

// SuccessDurations returns the durations of the newest successful attempts
// of tasks of kind and name ("" for unnamed tasks), at most limit (at
// least 1) of them, newest first.
func (s *Store) SuccessDurations(ctx context.Context, kind, name string, limit int) ([]time.Duration, error) {
	rows, err := s.pool.Query(ctx, s.sql(successDurationsSQL), kind, name, max(limit, 1))
	if err != nil {
		return nil, fmt.Errorf("success durations of %s %q: %w", kind, name, err)
	}
	micros, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("success durations of %s %q: %w", kind, name, err)
	}
	out := make([]time.Duration, len(micros))
	for i, us := range micros {
		out[i] = time.Duration(us) * time.Microsecond
	}
	return out, nil
}
