package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/grit-run/grit/store"
)

// Groups returns every group the store keeps.
func (s *Store) Groups(ctx context.Context) (map[string]store.Group, error) {
	rows, err := s.query(ctx, `SELECT name, state FROM groups`)
	if err != nil {
		return nil, fmt.Errorf("groups: %w", err)
	}
	defer rows.Close()
	out := map[string]store.Group{}
	for rows.Next() {
		var name, js string
		if err := rows.Scan(&name, &js); err != nil {
			return nil, fmt.Errorf("groups: %w", err)
		}
		var c store.Group
		if err := json.Unmarshal([]byte(js), &c); err != nil {
			return nil, fmt.Errorf("group %q: %w", name, err)
		}
		out[name] = c
	}
	return out, rows.Err()
}

// UpdateGroup changes a group with fn, in a transaction of its
// own (the store's one writer makes it atomic).
func (s *Store) UpdateGroup(ctx context.Context, group string, fn func(*store.Group)) (store.Group, error) {
	if err := store.ValidateGroup(group); err != nil {
		return store.Group{}, fmt.Errorf("update group: %w", err)
	}
	var c store.Group
	err := s.w.do(ctx, func(x *wtx) error {
		c = store.Group{}
		var js string
		err := x.queryRow(`SELECT state FROM groups WHERE name = ?`, group).Scan(&js)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			if err := json.Unmarshal([]byte(js), &c); err != nil {
				return fmt.Errorf("group %q: %w", group, err)
			}
		}
		if c.Limit > 0 {
			var err error
			if c.RunningIDs, err = runningOf(x, group); err != nil {
				return err
			}
		}
		fn(&c)
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		_, err = x.exec(`INSERT INTO groups (name, state, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
			group, string(b), x.now.UnixMicro())
		return err
	})
	if err != nil {
		return store.Group{}, fmt.Errorf("update group %q: %w", group, err)
	}
	return c, nil
}

// runningOf returns the ids of a group's running tasks in claim order: by
// the start of their open attempt, then by id (a task a rescue took over
// has none, and comes first).
func runningOf(x *wtx, group string) ([]int64, error) {
	rows, err := x.query(`SELECT id FROM tasks
		WHERE state = 'RUNNING' AND group_name = ? ORDER BY started_at, id`, group)
	if err != nil {
		return nil, err
	}
	return scanIDs(rows)
}
