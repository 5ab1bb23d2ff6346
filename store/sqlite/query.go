package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

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

// GetTask returns a task by id, with its result.
func (s *Store) GetTask(ctx context.Context, id int64) (task.Task, error) {
	var res sql.NullString
	t, err := scanTask(scanMore{s.queryRow(ctx, `SELECT `+taskCols+`, result FROM tasks WHERE id = ?`, id), []any{&res}})
	if err != nil {
		return task.Task{}, notFound(err, "get task", id)
	}
	if res.Valid {
		t.Result = json.RawMessage(res.String)
	}
	return t, nil
}

// scanMore scans the columns after those a scan of a row asks for into
// more.
type scanMore struct {
	r    scanner
	more []any
}

func (m scanMore) Scan(dest ...any) error { return m.r.Scan(append(dest, m.more...)...) }

// ListTasks returns the tasks f selects, by id: ascending, or descending
// when f.Newest. With states off the hot path and Newest, a page is a
// backward walk of tasks_state_id from BeforeID that stops at the page's
// size.
func (s *Store) ListTasks(ctx context.Context, f task.Filter) ([]task.Task, error) {
	where, args := taskConds(f)
	q := `SELECT ` + taskCols + ` FROM tasks`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY id`
	if f.Newest {
		q += ` DESC`
	}
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

// offPathStates is the WHERE clause of tasks_state_id (migration
// 0009_console.sql), word for word: SQLite uses a partial index only for
// a query that repeats its clause, so a state filter within these states
// repeats it.
const offPathStates = `state IN ('PENDING', 'RETRYING', 'SENSING', 'FAILED', 'UPSTREAM_FAILED', 'DEAD_LETTER', 'SKIPPED', 'CANCELLED')`

func offPath(states []task.State) bool {
	for _, st := range states {
		if !strings.Contains(offPathStates, "'"+string(st)+"'") {
			return false
		}
	}
	return true
}

// taskConds turns a filter into the conditions of a WHERE clause and
// their arguments. Each field set adds its own condition, so a statement
// text stands for one set of fields and the prepared statements stay few.
func taskConds(f task.Filter) (where []string, args []any) {
	add := func(cond string, arg ...any) {
		where = append(where, cond)
		args = append(args, arg...)
	}
	if len(f.IDs) > 0 {
		add("id IN (SELECT value FROM json_each(?))", jsonList(f.IDs))
	}
	if f.RunID != 0 {
		add("run_id = ?", f.RunID)
	}
	switch {
	case len(f.States) == 1:
		add("state = ?", string(f.States[0]))
	case len(f.States) > 1:
		add("state IN (SELECT value FROM json_each(?))", jsonList(f.States))
	}
	if len(f.States) > 0 && offPath(f.States) {
		add(offPathStates)
	}
	for _, c := range []struct{ col, v string }{
		{"kind", f.Kind}, {"name", f.Name}, {"queue", f.Queue}, {"group_name", f.Group}, {"tenant", f.Tenant}, {"fingerprint", f.Fingerprint},
	} {
		if c.v != "" {
			add(c.col+" = ?", c.v)
		}
	}
	if f.Text != "" {
		// Args are bytes kept as given: read as text, whatever they
		// hold. SQLite's lower folds ASCII letters alone.
		add(`(instr(lower(name), lower(?)) > 0 OR instr(lower(last_error), lower(?)) > 0
			OR instr(lower(CAST(args AS TEXT)), lower(?)) > 0)`, f.Text, f.Text, f.Text)
	}
	if !f.CreatedFrom.IsZero() {
		add("created_at >= ?", f.CreatedFrom.UnixMicro())
	}
	if !f.CreatedTo.IsZero() {
		add("created_at < ?", f.CreatedTo.UnixMicro())
	}
	if f.AfterID != 0 {
		add("id > ?", f.AfterID)
	}
	if f.BeforeID != 0 {
		add("id < ?", f.BeforeID)
	}
	return where, args
}

// attemptsSQL lists a task's attempts: the rows of those written to
// attempts, the open one, which lives on the task row until it ends, and a
// plain success's, which stays there (see succeedSQL): a task row with a
// started_at holds an attempt that has no row.
const attemptsSQL = `SELECT ` + attemptCols + ` FROM attempts WHERE task_id = ?1
UNION ALL
SELECT id, attempt, lease_owner, lease_token, started_at,
	CASE state WHEN 'SUCCESS' THEN finished_at END, CASE state WHEN 'SUCCESS' THEN 'SUCCESS' ELSE 'RUNNING' END,
	'', '', '', NULL, '', '', 0, '', 0, ''
FROM tasks WHERE id = ?1 AND state IN ('RUNNING', 'SUCCESS') AND started_at IS NOT NULL
ORDER BY lease_token`

// Attempts returns a task's attempts, oldest first.
func (s *Store) Attempts(ctx context.Context, taskID int64) ([]task.Attempt, error) {
	rows, err := s.query(ctx, attemptsSQL, taskID)
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
func (s *Store) Edges(ctx context.Context, runID int64) ([]task.Edge, error) {
	rows, err := s.query(ctx, `SELECT from_task, to_task FROM edges WHERE run_id = ? ORDER BY to_task, from_task`, runID)
	if err != nil {
		return nil, fmt.Errorf("edges of run %d: %w", runID, err)
	}
	defer rows.Close()
	var es []task.Edge
	for rows.Next() {
		var e task.Edge
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
