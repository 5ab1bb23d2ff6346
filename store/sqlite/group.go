package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/store"
)

// Circuits returns the circuit of every group that has one.
func (s *Store) Circuits(ctx context.Context) (map[string]breaker.Circuit, error) {
	rows, err := s.query(ctx, `SELECT name, circuit FROM groups`)
	if err != nil {
		return nil, fmt.Errorf("circuits: %w", err)
	}
	defer rows.Close()
	out := map[string]breaker.Circuit{}
	for rows.Next() {
		var name, js string
		if err := rows.Scan(&name, &js); err != nil {
			return nil, fmt.Errorf("circuits: %w", err)
		}
		var c breaker.Circuit
		if err := json.Unmarshal([]byte(js), &c); err != nil {
			return nil, fmt.Errorf("circuit of group %q: %w", name, err)
		}
		out[name] = c
	}
	return out, rows.Err()
}

// UpdateCircuit changes a group's circuit with fn, in a transaction of its
// own (the store's one writer makes it atomic).
func (s *Store) UpdateCircuit(ctx context.Context, group string, fn func(*breaker.Circuit)) (breaker.Circuit, error) {
	if err := store.ValidateGroup(group); err != nil {
		return breaker.Circuit{}, fmt.Errorf("update circuit: %w", err)
	}
	var c breaker.Circuit
	err := s.w.do(ctx, func(x *wtx) error {
		c = breaker.Circuit{}
		var js string
		err := x.queryRow(`SELECT circuit FROM groups WHERE name = ?`, group).Scan(&js)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			if err := json.Unmarshal([]byte(js), &c); err != nil {
				return fmt.Errorf("circuit of group %q: %w", group, err)
			}
		}
		fn(&c)
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		_, err = x.exec(`INSERT INTO groups (name, circuit, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET circuit = excluded.circuit, updated_at = excluded.updated_at`,
			group, string(b), x.now.UnixMicro())
		return err
	})
	if err != nil {
		return breaker.Circuit{}, fmt.Errorf("update circuit of group %q: %w", group, err)
	}
	return c, nil
}
