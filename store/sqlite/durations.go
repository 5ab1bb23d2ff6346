package sqlite

import (
	"context"
	"fmt"
	"time"
)

// SuccessDurations returns the durations of the newest successful attempts
// of tasks of kind and name, at most limit of them.
func (s *Store) SuccessDurations(ctx context.Context, kind, name string, limit int) ([]time.Duration, error) {
	rows, err := s.query(ctx, `SELECT a.ended_at - a.started_at FROM attempts a
		JOIN tasks t ON t.id = a.task_id
		WHERE t.kind = ? AND t.name = ? AND a.outcome = 'SUCCESS' AND a.ended_at IS NOT NULL
		ORDER BY a.ended_at DESC LIMIT ?`, kind, name, max(limit, 1))
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
