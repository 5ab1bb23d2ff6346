package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/store"
)

// SetLimit sets a queue's or tenant's limit of running attempts; a Max of
// 0 removes it.
func (s *Store) SetLimit(ctx context.Context, l store.Limit) error {
	if err := store.ValidateLimit(l); err != nil {
		return fmt.Errorf("set limit: %w", err)
	}
	var err error
	if l.Max == 0 {
		_, err = s.pool.Exec(ctx, s.sql(`DELETE FROM $S.limits WHERE scope = $1 AND name = $2`), string(l.Scope), l.Name)
	} else {
		_, err = s.pool.Exec(ctx, s.sql(`INSERT INTO $S.limits (scope, name, max) VALUES ($1, $2, $3)
			ON CONFLICT (scope, name) DO UPDATE SET max = excluded.max`), string(l.Scope), l.Name, l.Max)
	}
	if err != nil {
		return fmt.Errorf("set limit of %s %q: %w", l.Scope, l.Name, err)
	}
	return nil
}

// Limits returns every limit, by scope and name, with its running attempts.
func (s *Store) Limits(ctx context.Context) ([]store.Limit, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT l.scope, l.name, l.max,
		(SELECT count(*) FROM $S.tasks t WHERE t.state = 'RUNNING'
			AND CASE l.scope WHEN 'queue' THEN t.queue ELSE t.tenant END = l.name)
		FROM $S.limits l ORDER BY l.scope, l.name`))
	if err != nil {
		return nil, fmt.Errorf("limits: %w", err)
	}
	var out []store.Limit
	var l store.Limit
	_, err = pgx.ForEachRow(rows, []any{&l.Scope, &l.Name, &l.Max, &l.Running}, func() error {
		out = append(out, l)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("limits: %w", err)
	}
	return out, nil
}

// Running returns the running tasks of the named queues, tenants or
// groups, each name's in claim order: by the claim's start (started_at),
// then by id.
func (s *Store) Running(ctx context.Context, scope store.Scope, names []string) (map[string][]int64, error) {
	if err := store.ValidateScope(scope); err != nil {
		return nil, err
	}
	col := map[store.Scope]string{store.ScopeQueue: "queue", store.ScopeTenant: "tenant", store.ScopeGroup: "group_name"}[scope]
	rows, err := s.pool.Query(ctx, s.sql(`SELECT `+col+`, array_agg(id ORDER BY started_at, id) FROM $S.tasks
		WHERE state = 'RUNNING' AND `+col+` = ANY ($1) GROUP BY 1`), names)
	if err != nil {
		return nil, fmt.Errorf("running attempts by %s: %w", scope, err)
	}
	out := map[string][]int64{}
	var name string
	var ids []int64
	_, err = pgx.ForEachRow(rows, []any{&name, &ids}, func() error {
		out[name] = ids
		ids = nil
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("running attempts by %s: %w", scope, err)
	}
	return out, nil
}
