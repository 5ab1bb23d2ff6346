package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/store"
)

// Circuits returns the circuit of every group that has one.
func (s *Store) Circuits(ctx context.Context) (map[string]breaker.Circuit, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT name, circuit FROM $S.groups`))
	if err != nil {
		return nil, fmt.Errorf("circuits: %w", err)
	}
	out := map[string]breaker.Circuit{}
	var name string
	var js []byte
	_, err = pgx.ForEachRow(rows, []any{&name, &js}, func() error {
		var c breaker.Circuit
		if err := json.Unmarshal(js, &c); err != nil {
			return fmt.Errorf("circuit of group %q: %w", name, err)
		}
		out[name] = c
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("circuits: %w", err)
	}
	return out, nil
}

// UpdateCircuit changes a group's circuit with fn, in a transaction of its
// own, under the lock of the group's row: workers change it one at a time.
func (s *Store) UpdateCircuit(ctx context.Context, group string, fn func(*breaker.Circuit)) (breaker.Circuit, error) {
	if err := store.ValidateGroup(group); err != nil {
		return breaker.Circuit{}, fmt.Errorf("update circuit: %w", err)
	}
	var c breaker.Circuit
	err := s.tx(ctx, func(tx pgx.Tx) error {
		c = breaker.Circuit{}
		if _, err := tx.Exec(ctx, s.sql(`INSERT INTO $S.groups (name, circuit) VALUES ($1, '{}') ON CONFLICT DO NOTHING`), group); err != nil {
			return err
		}
		var js []byte
		err := tx.QueryRow(ctx, s.sql(`SELECT circuit FROM $S.groups WHERE name = $1 FOR UPDATE`), group).Scan(&js)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if err := json.Unmarshal(js, &c); err != nil {
			return fmt.Errorf("circuit of group %q: %w", group, err)
		}
		fn(&c)
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, s.sql(`UPDATE $S.groups SET circuit = $2, updated_at = now() WHERE name = $1`), group, b)
		return err
	})
	if err != nil {
		return breaker.Circuit{}, fmt.Errorf("update circuit of group %q: %w", group, err)
	}
	return c, nil
}
