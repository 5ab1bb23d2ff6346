package sqlite

import (
	"context"
	"fmt"

	"github.com/grit-run/grit/store"
)

// SetLimit sets a queue's or tenant's limit of running attempts; a Max of
// 0 removes it.
func (s *Store) SetLimit(ctx context.Context, l store.Limit) error {
	if err := store.ValidateLimit(l); err != nil {
		return fmt.Errorf("set limit: %w", err)
	}
	err := s.w.do(ctx, func(x *wtx) error {
		if l.Max == 0 {
			_, err := x.exec(`DELETE FROM limits WHERE scope = ? AND name = ?`, string(l.Scope), l.Name)
			return err
		}
		_, err := x.exec(`INSERT INTO limits (scope, name, max) VALUES (?, ?, ?)
			ON CONFLICT (scope, name) DO UPDATE SET max = excluded.max`, string(l.Scope), l.Name, l.Max)
		return err
	})
	if err != nil {
		return fmt.Errorf("set limit of %s %q: %w", l.Scope, l.Name, err)
	}
	return nil
}

// Limits returns every limit, by scope and name, with its running attempts.
func (s *Store) Limits(ctx context.Context) ([]store.Limit, error) {
	rows, err := s.query(ctx, `SELECT l.scope, l.name, l.max,
		(SELECT count(*) FROM tasks t WHERE t.state = 'RUNNING'
			AND CASE l.scope WHEN 'queue' THEN t.queue ELSE t.tenant END = l.name)
		FROM limits l ORDER BY l.scope, l.name`)
	if err != nil {
		return nil, fmt.Errorf("limits: %w", err)
	}
	defer rows.Close()
	var out []store.Limit
	for rows.Next() {
		var l store.Limit
		if err := rows.Scan(&l.Scope, &l.Name, &l.Max, &l.Running); err != nil {
			return nil, fmt.Errorf("limits: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// Running returns the running tasks of the named queues, tenants or
// groups, each name's in claim order: by the start of their open attempt,
// then by id (a task a rescue took over has none, and comes first).
func (s *Store) Running(ctx context.Context, scope store.Scope, names []string) (map[string][]int64, error) {
	if err := store.ValidateScope(scope); err != nil {
		return nil, err
	}
	col := map[store.Scope]string{store.ScopeQueue: "queue", store.ScopeTenant: "tenant", store.ScopeGroup: "group_name"}[scope]
	rows, err := s.query(ctx, `SELECT `+col+`, id FROM tasks
		WHERE state = 'RUNNING' AND `+col+` IN (SELECT value FROM json_each(?))
		ORDER BY `+col+`, started_at, id`, jsonList(names))
	if err != nil {
		return nil, fmt.Errorf("running attempts by %s: %w", scope, err)
	}
	defer rows.Close()
	out := map[string][]int64{}
	for rows.Next() {
		var name string
		var id int64
		if err := rows.Scan(&name, &id); err != nil {
			return nil, fmt.Errorf("running attempts by %s: %w", scope, err)
		}
		out[name] = append(out[name], id)
	}
	return out, rows.Err()
}
