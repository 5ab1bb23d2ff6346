package postgres

import (
	"context"
	"fmt"

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
