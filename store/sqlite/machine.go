package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

const instanceCols = `machine, key, state, due, version, updated`

func scanInstance(row scanner) (store.InstanceRow, error) {
	var r store.InstanceRow
	var state string
	var due, updated sql.NullInt64
	if err := row.Scan(&r.Machine, &r.Key, &state, &due, &r.Version, &updated); err != nil {
		return store.InstanceRow{}, err
	}
	r.State, r.Due, r.Updated = json.RawMessage(state), fromMicros(due), fromMicros(updated)
	return r, nil
}

// GetInstance returns the instance key of machine.
func (s *Store) GetInstance(ctx context.Context, machine, key string) (store.InstanceRow, error) {
	r, err := scanInstance(s.queryRow(ctx, `SELECT `+instanceCols+` FROM fsm_instances WHERE machine = ? AND key = ?`, machine, key))
	if errors.Is(err, sql.ErrNoRows) {
		return store.InstanceRow{}, fmt.Errorf("instance %q of machine %q: %w", key, machine, task.ErrNotFound)
	}
	if err != nil {
		return store.InstanceRow{}, fmt.Errorf("instance %q of machine %q: %w", key, machine, err)
	}
	return r, nil
}

// Instances lists instances by machine, then key.
func (s *Store) Instances(ctx context.Context, f store.InstanceFilter) ([]store.InstanceRow, error) {
	limit := f.LimitOrDefault()
	rows, err := s.query(ctx, `SELECT `+instanceCols+` FROM fsm_instances
		WHERE (?1 = '' OR machine = ?1) AND (?2 IS NULL OR due <= ?2) AND (?1 = '' OR key > ?3)
		ORDER BY machine, key LIMIT ?4`, f.Machine, micros(f.DueBy), f.AfterKey, limit)
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
// w's tasks and writes the state w.Then returns, in one write transaction.
func (s *Store) WriteInstance(ctx context.Context, w store.InstanceWrite) (store.InstanceRow, bool, error) {
	if err := store.ValidateInstanceWrite(w); err != nil {
		return store.InstanceRow{}, false, err
	}
	var row store.InstanceRow
	ok, err := s.writeVersioned(ctx, func(x *wtx) (sql.Result, error) {
		if w.Version == 0 {
			return x.exec(`INSERT INTO fsm_instances (machine, key, state, version, updated) VALUES (?, ?, '{}', 0, ?)
				ON CONFLICT (machine, key) DO NOTHING`, w.Machine, w.Key, x.now.UnixMicro())
		}
		return x.exec(`UPDATE fsm_instances SET version = version WHERE machine = ? AND key = ? AND version = ?`, w.Machine, w.Key, w.Version)
	}, w.Tasks, w.Then, func(x *wtx, state string, due any) error {
		var err error
		row, err = scanInstance(x.queryRow(`UPDATE fsm_instances SET state = ?, due = ?, version = version + 1, updated = ?
			WHERE machine = ? AND key = ? RETURNING `+instanceCols, state, due, x.now.UnixMicro(), w.Machine, w.Key))
		return err
	})
	if err != nil {
		return store.InstanceRow{}, false, fmt.Errorf("write instance %q of machine %q: %w", w.Key, w.Machine, err)
	}
	return row, ok, nil
}
