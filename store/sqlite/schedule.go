package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

const scheduleCols = `name, def, state, due, version, updated`

func scanSchedule(row scanner) (store.ScheduleRow, error) {
	var r store.ScheduleRow
	var def, state string
	var due, updated sql.NullInt64
	if err := row.Scan(&r.Name, &def, &state, &due, &r.Version, &updated); err != nil {
		return store.ScheduleRow{}, err
	}
	r.Def, r.State = json.RawMessage(def), json.RawMessage(state)
	r.Due, r.Updated = fromMicros(due), fromMicros(updated)
	return r, nil
}

// Schedules lists the schedules by name, or those due by dueBy.
func (s *Store) Schedules(ctx context.Context, dueBy time.Time) ([]store.ScheduleRow, error) {
	q, args := `SELECT `+scheduleCols+` FROM schedules ORDER BY name`, []any(nil)
	if !dueBy.IsZero() {
		q, args = `SELECT `+scheduleCols+` FROM schedules WHERE due <= ? ORDER BY name`, []any{dueBy.UnixMicro()}
	}
	rows, err := s.query(ctx, q, args...)
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
	r, err := scanSchedule(s.queryRow(ctx, `SELECT `+scheduleCols+` FROM schedules WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return store.ScheduleRow{}, fmt.Errorf("schedule %q: %w", name, task.ErrNotFound)
	}
	if err != nil {
		return store.ScheduleRow{}, fmt.Errorf("schedule %q: %w", name, err)
	}
	return r, nil
}

// WriteSchedule takes the row at w.Version (or makes it), enqueues w's
// tasks and writes the state w.Then returns, in one write transaction
// (the store has one writer, so no other write comes between).
func (s *Store) WriteSchedule(ctx context.Context, w store.ScheduleWrite) (store.ScheduleRow, bool, error) {
	if err := store.ValidateScheduleWrite(w); err != nil {
		return store.ScheduleRow{}, false, err
	}
	var row store.ScheduleRow
	ok, err := s.writeVersioned(ctx, func(x *wtx) (sql.Result, error) {
		if w.Version == 0 {
			return x.exec(`INSERT INTO schedules (name, def, state, version, updated) VALUES (?, ?, '{}', 0, ?)
				ON CONFLICT (name) DO NOTHING`, w.Name, string(w.Def), x.now.UnixMicro())
		}
		return x.exec(`UPDATE schedules SET version = version WHERE name = ? AND version = ?`, w.Name, w.Version)
	}, w.Tasks, w.Then, func(x *wtx, state string, due any) error {
		var def any // NULL keeps the declaration
		if len(w.Def) > 0 {
			def = string(w.Def)
		}
		var err error
		row, err = scanSchedule(x.queryRow(`UPDATE schedules SET def = coalesce(?, def), state = ?, due = ?,
			version = version + 1, updated = ? WHERE name = ? RETURNING `+scheduleCols,
			def, state, due, x.now.UnixMicro(), w.Name))
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
	err := s.w.do(ctx, func(x *wtx) error {
		res, err := x.exec(`DELETE FROM schedules WHERE name = ?`, name)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("delete schedule %q: %w", name, err)
	}
	return n > 0, nil
}
