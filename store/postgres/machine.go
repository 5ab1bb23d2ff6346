package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

const instanceCols = `machine, key, state, due, version, updated`

func scanInstance(row pgx.Row) (store.InstanceRow, error) {
	var r store.InstanceRow
	var state []byte
	var due pgtype.Timestamptz
	if err := row.Scan(&r.Machine, &r.Key, &state, &due, &r.Version, &r.Updated); err != nil {
		return store.InstanceRow{}, err
	}
	r.State = json.RawMessage(state)
	if due.Valid {
		r.Due = due.Time
	}
	return r, nil
}

// GetInstance returns the instance key of machine.
func (s *Store) GetInstance(ctx context.Context, machine, key string) (store.InstanceRow, error) {
	r, err := scanInstance(s.pool.QueryRow(ctx, s.sql(`SELECT `+instanceCols+` FROM $S.fsm_instances WHERE machine = $1 AND key = $2`), machine, key))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.InstanceRow{}, fmt.Errorf("instance %q of machine %q: %w", key, machine, task.ErrNotFound)
	}
	if err != nil {
		return store.InstanceRow{}, fmt.Errorf("instance %q of machine %q: %w", key, machine, err)
	}
	return r, nil
}

// Instances lists instances by machine, then key.
func (s *Store) Instances(ctx context.Context, f store.InstanceFilter) ([]store.InstanceRow, error) {
	var dueBy pgtype.Timestamptz
	if !f.DueBy.IsZero() {
		dueBy = pgtype.Timestamptz{Time: f.DueBy, Valid: true}
	}
	limit := f.LimitOrDefault()
	rows, err := s.pool.Query(ctx, s.sql(`SELECT `+instanceCols+` FROM $S.fsm_instances
		WHERE ($1 = '' OR machine = $1) AND ($2::timestamptz IS NULL OR due <= $2) AND ($1 = '' OR key > $3)
		ORDER BY machine, key LIMIT $4`), f.Machine, dueBy, f.AfterKey, limit)
	if err != nil {
		return nil, fmt.Errorf("instances: %w", err)
	}
	defer rows.Close()
	var out []store.InstanceRow
	for rows.Next() {
		r, err := scanInstance(rows)
		if err != nil {
			return nil, fmt.Errorf("instances: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("instances: %w", err)
	}
	return out, nil
}

// WriteInstance takes the instance at w.Version (or makes it), enqueues
// w's tasks and writes the state w.Then returns, in one transaction
// (writeVersioned).
func (s *Store) WriteInstance(ctx context.Context, w store.InstanceWrite) (store.InstanceRow, bool, error) {
	if err := store.ValidateInstanceWrite(w); err != nil {
		return store.InstanceRow{}, false, err
	}
	var row store.InstanceRow
	ok, err := s.writeVersioned(ctx, func(tx pgx.Tx) (pgconn.CommandTag, error) {
		if w.Version == 0 {
			return tx.Exec(ctx, s.sql(`INSERT INTO $S.fsm_instances (machine, key, state, version) VALUES ($1, $2, '{}', 0)
				ON CONFLICT (machine, key) DO NOTHING`), w.Machine, w.Key)
		}
		return tx.Exec(ctx, s.sql(`UPDATE $S.fsm_instances SET version = version WHERE machine = $1 AND key = $2 AND version = $3`), w.Machine, w.Key, w.Version)
	}, w.Tasks, w.Then, func(tx pgx.Tx, state string, due pgtype.Timestamptz) error {
		var err error
		row, err = scanInstance(tx.QueryRow(ctx, s.sql(`UPDATE $S.fsm_instances SET state = $3, due = $4, version = version + 1, updated = now()
			WHERE machine = $1 AND key = $2 RETURNING `+instanceCols), w.Machine, w.Key, state, due))
		return err
	})
	if err != nil {
		return store.InstanceRow{}, false, fmt.Errorf("write instance %q of machine %q: %w", w.Key, w.Machine, err)
	}
	return row, ok, nil
}
