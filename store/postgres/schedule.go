package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

const scheduleCols = `name, def, state, due, version, updated`

func scanSchedule(row pgx.Row) (store.ScheduleRow, error) {
	var r store.ScheduleRow
	var def, state []byte
	var due pgtype.Timestamptz
	if err := row.Scan(&r.Name, &def, &state, &due, &r.Version, &r.Updated); err != nil {
		return store.ScheduleRow{}, err
	}
	r.Def, r.State = json.RawMessage(def), json.RawMessage(state)
	if due.Valid {
		r.Due = due.Time
	}
	return r, nil
}

// Schedules lists the schedules by name, or those due by dueBy.
func (s *Store) Schedules(ctx context.Context, dueBy time.Time) ([]store.ScheduleRow, error) {
	q, args := `SELECT `+scheduleCols+` FROM $S.schedules ORDER BY name`, []any(nil)
	if !dueBy.IsZero() {
		q, args = `SELECT `+scheduleCols+` FROM $S.schedules WHERE due <= $1 ORDER BY name`, []any{dueBy}
	}
	rows, err := s.pool.Query(ctx, s.sql(q), args...)
	if err != nil {
		return nil, fmt.Errorf("schedules: %w", err)
	}
	defer rows.Close()
	var out []store.ScheduleRow
	for rows.Next() {
		r, err := scanSchedule(rows)
		if err != nil {
			return nil, fmt.Errorf("schedules: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("schedules: %w", err)
	}
	return out, nil
}

// GetSchedule returns the schedule name.
func (s *Store) GetSchedule(ctx context.Context, name string) (store.ScheduleRow, error) {
	r, err := scanSchedule(s.pool.QueryRow(ctx, s.sql(`SELECT `+scheduleCols+` FROM $S.schedules WHERE name = $1`), name))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ScheduleRow{}, fmt.Errorf("schedule %q: %w", name, task.ErrNotFound)
	}
	if err != nil {
		return store.ScheduleRow{}, fmt.Errorf("schedule %q: %w", name, err)
	}
	return r, nil
}

// WriteSchedule takes the row at w.Version (or makes it), enqueues w's
// tasks, and writes the state w.Then returns, in one transaction
// (writeVersioned).
func (s *Store) WriteSchedule(ctx context.Context, w store.ScheduleWrite) (store.ScheduleRow, bool, error) {
	if err := store.ValidateScheduleWrite(w); err != nil {
		return store.ScheduleRow{}, false, err
	}
	var row store.ScheduleRow
	ok, err := s.writeVersioned(ctx, func(tx pgx.Tx) (pgconn.CommandTag, error) {
		if w.Version == 0 {
			return tx.Exec(ctx, s.sql(`INSERT INTO $S.schedules (name, def, state, version) VALUES ($1, $2, '{}', 0)
				ON CONFLICT (name) DO NOTHING`), w.Name, string(w.Def))
		}
		return tx.Exec(ctx, s.sql(`UPDATE $S.schedules SET version = version WHERE name = $1 AND version = $2`), w.Name, w.Version)
	}, w.Tasks, w.Then, func(tx pgx.Tx, state string, due pgtype.Timestamptz) error {
		var def any // NULL keeps the declaration
		if len(w.Def) > 0 {
			def = string(w.Def)
		}
		var err error
		row, err = scanSchedule(tx.QueryRow(ctx, s.sql(`UPDATE $S.schedules SET def = coalesce($2::json, def), state = $3,
			due = $4, version = version + 1, updated = now() WHERE name = $1 RETURNING `+scheduleCols),
			w.Name, def, state, due))
		return err
	})
	if err != nil {
		return store.ScheduleRow{}, false, fmt.Errorf("write schedule %q: %w", w.Name, err)
	}
	return row, ok, nil
}

// DeleteSchedule deletes the schedule name.
func (s *Store) DeleteSchedule(ctx context.Context, name string) (bool, error) {
	var n int64
	err := retrying(ctx, func(ctx context.Context) error {
		tag, err := s.pool.Exec(ctx, s.sql(`DELETE FROM $S.schedules WHERE name = $1`), name)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("delete schedule %q: %w", name, err)
	}
	return n > 0, nil
}
