package sqlite

import (
	"context"
	"fmt"

	"github.com/grit-run/grit/store"
)

// Spread makes the store a store.Spreader: through attempts_failures and
// tasks_success (0007).
func (s *Store) Spread(ctx context.Context, q store.SpreadQuery) (store.Spread, error) {
	var out store.Spread
	since := q.Since.UnixMicro()
	err := s.queryRow(ctx, `SELECT count(*) FROM (
		SELECT DISTINCT a.task_id FROM attempts a JOIN tasks t ON t.id = a.task_id
		WHERE a.outcome = 'ERROR' AND a.fingerprint = ? AND a.ended_at >= ?
			AND ((?3 = '' AND t.kind = ?4) OR (?3 <> '' AND t.group_name = ?3))
		LIMIT ?5)`, q.Fingerprint, since, q.Group, q.Kind, max(q.Limit, 1)).Scan(&out.Tasks)
	if err == nil && q.Succeeded {
		err = s.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tasks
			WHERE state = 'SUCCESS' AND finished_at >= ?
				AND ((?2 = '' AND kind = ?3) OR (?2 <> '' AND group_name = ?2)))`, since, q.Group, q.Kind).Scan(&out.Succeeded)
	}
	if err != nil {
		return store.Spread{}, fmt.Errorf("spread of %q in %s: %w", q.Fingerprint, q.Scope(), err)
	}
	return out, nil
}
