package postgres

import (
	"context"
	"fmt"

	"github.com/grit-run/grit/store"
)

// spreadSQL counts, through attempts_failures (0018), the distinct tasks
// of a kind ($1) or, when $2 is set, of a group with a failed attempt of
// fingerprint $3 since $4, up to $5.
const spreadSQL = `SELECT count(*) FROM (
	SELECT DISTINCT a.task_id FROM $S.attempts a JOIN $S.tasks t ON t.id = a.task_id
	WHERE a.outcome = 'ERROR' AND a.fingerprint = $3 AND a.ended_at >= $4
		AND (($2 = '' AND t.kind = $1) OR ($2 <> '' AND t.group_name = $2))
	LIMIT $5) f`

// succeededSQL looks, through tasks_success (0016) for a kind, for a task
// of the scope that succeeded since $3.
const succeededSQL = `SELECT EXISTS (SELECT 1 FROM $S.tasks
	WHERE state = 'SUCCESS' AND finished_at >= $3
		AND (($2 = '' AND kind = $1) OR ($2 <> '' AND group_name = $2)))`

// Spread makes the store a store.Spreader.
func (s *Store) Spread(ctx context.Context, q store.SpreadQuery) (store.Spread, error) {
	var out store.Spread
	err := s.pool.QueryRow(ctx, s.sql(spreadSQL), q.Kind, q.Group, q.Fingerprint, q.Since, max(q.Limit, 1)).Scan(&out.Tasks)
	if err == nil && q.Succeeded {
		err = s.pool.QueryRow(ctx, s.sql(succeededSQL), q.Kind, q.Group, q.Since).Scan(&out.Succeeded)
	}
	if err != nil {
		return store.Spread{}, fmt.Errorf("spread of %q in %s: %w", q.Fingerprint, q.Scope(), err)
	}
	return out, nil
}
