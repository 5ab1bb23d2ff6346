package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

const findRunSQL = `SELECT ` + runCols + ` FROM runs WHERE key = ? ORDER BY id DESC LIMIT 1`

func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := s.rstmts.get(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (s *Store) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := s.rstmts.get(ctx, q)
	if err != nil {
		return s.read.QueryRowContext(ctx, q, args...) // reports err through Scan
	}
	return st.QueryRowContext(ctx, args...)
}

// notFound turns sql.ErrNoRows into task.ErrNotFound, naming what was sought.
func notFound(err error, what string, id any) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s %v: %w", what, id, task.ErrNotFound)
	}
	return fmt.Errorf("%s %v: %w", what, id, err)
}

// GetTask returns a task by id.
func (s *Store) GetTask(ctx context.Context, id int64) (task.Task, error) {
	t, err := scanTask(s.queryRow(ctx, `SELECT `+taskCols+` FROM tasks WHERE id = ?`, id))
	if err != nil {
		return task.Task{}, notFound(err, "get task", id)
	}
	return t, nil
}

// ListTasks returns the tasks f selects, by id.
func (s *Store) ListTasks(ctx context.Context, f store.Filter) ([]task.Task, error) {
	var where []string
	var args []any
	add := func(cond string, arg any) {
		where = append(where, cond)
		args = append(args, arg)
	}
	if f.RunID != 0 {
		add("run_id = ?", f.RunID)
	}
	if len(f.States) > 0 {
		add("state IN (SELECT value FROM json_each(?))", jsonList(f.States))
	}
	if f.Kind != "" {
		add("kind = ?", f.Kind)
	}
	if f.Queue != "" {
		add("queue = ?", f.Queue)
	}
	add("id > ?", f.AfterID)
	q := `SELECT ` + taskCols + ` FROM tasks WHERE ` + strings.Join(where, " AND ") + ` ORDER BY id`
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	ts, err := scanTasks(rows)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return ts, nil
}

// Attempts returns a task's attempts, oldest first.
func (s *Store) Attempts(ctx context.Context, taskID int64) ([]task.Attempt, error) {
	rows, err := s.query(ctx, `SELECT `+attemptCols+` FROM attempts WHERE task_id = ? ORDER BY lease_token`, taskID)
	if err != nil {
		return nil, fmt.Errorf("attempts of task %d: %w", taskID, err)
	}
	defer rows.Close()
	var as []task.Attempt
	for rows.Next() {
		a, err := scanAttempt(rows)
		if err != nil {
			return nil, fmt.Errorf("attempts of task %d: %w", taskID, err)
		}
		as = append(as, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("attempts of task %d: %w", taskID, err)
	}
	if len(as) == 0 {
		return nil, s.exists(ctx, "tasks", taskID)
	}
	return as, nil
}

// exists returns task.ErrNotFound unless table has a row with this id.
func (s *Store) exists(ctx context.Context, table string, id int64) error {
	var one int
	err := s.queryRow(ctx, `SELECT 1 FROM `+table+` WHERE id = ?`, id).Scan(&one)
	if err != nil {
		return notFound(err, strings.TrimSuffix(table, "s"), id)
	}
	return nil
}

// GetRun returns a run by id.
func (s *Store) GetRun(ctx context.Context, id int64) (task.Run, error) {
	r, err := scanRun(s.queryRow(ctx, `SELECT `+runCols+` FROM runs WHERE id = ?`, id))
	if err != nil {
		return task.Run{}, notFound(err, "get run", id)
	}
	return r, nil
}

// FindRun returns the newest run with this key.
func (s *Store) FindRun(ctx context.Context, key string) (task.Run, error) {
	r, err := scanRun(s.queryRow(ctx, findRunSQL, key))
	if err != nil {
		return task.Run{}, notFound(err, "find run with key", fmt.Sprintf("%q", key))
	}
	return r, nil
}

// Edges returns a run's dependency edges.
func (s *Store) Edges(ctx context.Context, runID int64) ([]store.Edge, error) {
	rows, err := s.query(ctx, `SELECT from_task, to_task FROM edges WHERE run_id = ? ORDER BY to_task, from_task`, runID)
	if err != nil {
		return nil, fmt.Errorf("edges of run %d: %w", runID, err)
	}
	defer rows.Close()
	var es []store.Edge
	for rows.Next() {
		var e store.Edge
		if err := rows.Scan(&e.From, &e.To); err != nil {
			return nil, fmt.Errorf("edges of run %d: %w", runID, err)
		}
		es = append(es, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("edges of run %d: %w", runID, err)
	}
	if len(es) == 0 {
		return nil, s.exists(ctx, "runs", runID)
	}
	return es, nil
}
