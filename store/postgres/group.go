package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/store"
)

// Groups returns every group the store keeps.
func (s *Store) Groups(ctx context.Context) (map[string]store.Group, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT name, state FROM $S.groups`))
	if err != nil {
		return nil, fmt.Errorf("groups: %w", err)
	}
	out := map[string]store.Group{}
	var name string
	var js []byte
	_, err = pgx.ForEachRow(rows, []any{&name, &js}, func() error {
		var c store.Group
		if err := json.Unmarshal(js, &c); err != nil {
			return fmt.Errorf("group %q: %w", name, err)
		}
		out[name] = c
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("groups: %w", err)
	}
	return out, nil
}

// UpdateGroup changes a group with fn, in a transaction of its
// own, under the lock of the group's row: workers change it one at a time.
func (s *Store) UpdateGroup(ctx context.Context, group string, fn func(*store.Group)) (store.Group, error) {
	if err := store.ValidateGroup(group); err != nil {
		return store.Group{}, fmt.Errorf("update group: %w", err)
	}
	var c store.Group
	err := s.tx(ctx, func(tx pgx.Tx) error {
		c = store.Group{}
		if _, err := tx.Exec(ctx, s.sql(`INSERT INTO $S.groups (name, state) VALUES ($1, '{}') ON CONFLICT DO NOTHING`), group); err != nil {
			return err
		}
		var js []byte
		err := tx.QueryRow(ctx, s.sql(`SELECT state FROM $S.groups WHERE name = $1 FOR UPDATE`), group).Scan(&js)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if err := json.Unmarshal(js, &c); err != nil {
			return fmt.Errorf("group %q: %w", group, err)
		}
		if c.Limit > 0 {
			rows, err := tx.Query(ctx, s.sql(`SELECT id FROM $S.tasks WHERE state = 'RUNNING' AND group_name = $1 ORDER BY started_at, id`), group)
			if err == nil {
				c.RunningIDs, err = pgx.CollectRows(rows, pgx.RowTo[int64])
			}
			if err != nil {
				return err
			}
		}
		fn(&c)
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, s.sql(`UPDATE $S.groups SET state = $2, updated_at = now() WHERE name = $1`), group, b)
		return err
	})
	if err != nil {
		return store.Group{}, fmt.Errorf("update group %q: %w", group, err)
	}
	return c, nil
}
