package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/task"
)

// notFound turns pgx.ErrNoRows into task.ErrNotFound, naming what was
// sought.
func notFound(err error, what string, id any) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s %v: %w", what, id, task.ErrNotFound)
	}
	return fmt.Errorf("%s %v: %w", what, id, err)
}

// GetTask returns a task by id, with its result.
func (s *Store) GetTask(ctx context.Context, id int64) (task.Task, error) {
	var res []byte
	t, err := scanTaskAfter(s.pool.QueryRow(ctx, s.sql(`SELECT result, `+taskCols+` FROM $S.tasks WHERE id = $1`), id), &res)
	if err != nil {
		return task.Task{}, notFound(err, "get task", id)
	}
	if res != nil {
		t.Result = json.RawMessage(res)
	}
	return t, nil
}

// ListTasks returns the tasks f selects, by id: ascending, or descending
// when f.Newest. With a state and Newest, a page is a backward walk of
// tasks_state_id (or of the primary key, for the states of the hot path)
// from BeforeID that stops at the page's size.
func (s *Store) ListTasks(ctx context.Context, f task.Filter) ([]task.Task, error) {
	q, args := listTasksSQL(f)
	ts, err := scanTasks(s.pool.Query(ctx, s.sql(q), args...))
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return ts, nil
}

// listTasksSQL is the statement that lists the tasks f selects, and its
// arguments.
func listTasksSQL(f task.Filter) (string, []any) {
	where, args := taskConds(f)
	q := `SELECT ` + taskCols + ` FROM $S.tasks`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY id`
	if f.Newest {
		q += ` DESC`
	}
	if f.Limit > 0 {
		args = append(args, f.Limit)
		q += fmt.Sprintf(` LIMIT $%d`, len(args))
	}
	return q, args
}

// taskConds turns a filter into the conditions of a WHERE clause and
// their arguments, numbered from $1.
func taskConds(f task.Filter) (where []string, args []any) {
	add := func(cond string, arg any) {
		args = append(args, arg)
		where = append(where, strings.ReplaceAll(cond, "$?", fmt.Sprintf("$%d", len(args))))
	}
	if len(f.IDs) > 0 {
		add("id = ANY($?::bigint[])", f.IDs)
	}
	if f.RunID != 0 {
		add("run_id = $?", f.RunID)
	}
	// One state is compared as one value: a page of it, newest first, is
	// then a walk of an index on (state, id) in order. With an array, even
	// of one, the planner cannot tell the walk is in id order, and sorts
	// every task of the state.
	switch {
	case len(f.States) == 1:
		add("state = $?", string(f.States[0]))
	case len(f.States) > 1:
		add("state = ANY($?::text[])", stateNames(f.States))
	}
	for _, c := range []struct{ col, v string }{
		{"kind", f.Kind}, {"name", f.Name}, {"queue", f.Queue}, {"group_name", f.Group}, {"tenant", f.Tenant}, {"fingerprint", f.Fingerprint},
	} {
		if c.v != "" {
			add(c.col+" = $?", c.v)
		}
	}
	if f.Text != "" {
		// Args are bytes kept as given; encode(..., 'escape') reads them
		// as text whatever they hold (convert_from would fail the whole
		// list on one task's bytes that are not UTF-8), writing bytes
		// past ASCII as octal escapes, and the text sought is written
		// the same way to match them. That text is ASCII alone, so it is
		// lowered in the C collation: the same letters, in about a third
		// less time than a UTF-8 collation's lower on a million rows.
		add(`(strpos(lower(name), lower($?)) > 0 OR strpos(lower(last_error), lower($?)) > 0
			OR strpos(lower(encode(args, 'escape') COLLATE "C"), lower(encode(convert_to($?, 'UTF8'), 'escape') COLLATE "C")) > 0)`, f.Text)
	}
	if !f.CreatedFrom.IsZero() {
		add("created_at >= $?", f.CreatedFrom)
	}
	if !f.CreatedTo.IsZero() {
		add("created_at < $?", f.CreatedTo)
	}
	if f.AfterID != 0 {
		add("id > $?", f.AfterID)
	}
	if f.BeforeID != 0 {
		add("id < $?", f.BeforeID)
	}
	return where, args
}

func stateNames(states []task.State) []string {
	out := make([]string, len(states))
	for i, st := range states {
		out[i] = string(st)
	}
	return out
}

// attemptsSQL lists a task's attempts: the rows of those written to
// attempts, the open one, which lives on the task row until it ends, and a
// plain success's, which stays there (see succeedSQL): a task row with a
// started_at holds an attempt that has no row.
const attemptsSQL = `SELECT ` + attemptCols + ` FROM $S.attempts WHERE task_id = $1
UNION ALL
SELECT id, attempt, lease_owner, lease_token, started_at,
	CASE state WHEN 'SUCCESS' THEN finished_at END, CASE state WHEN 'SUCCESS' THEN 'SUCCESS' ELSE 'RUNNING' END,
	'', '', '', NULL, '', '', 0, '', 0, ''
FROM $S.tasks WHERE id = $1 AND state IN ('RUNNING', 'SUCCESS') AND started_at IS NOT NULL
ORDER BY lease_token`

// Attempts returns a task's attempts, oldest first.
func (s *Store) Attempts(ctx context.Context, taskID int64) ([]task.Attempt, error) {
	rows, err := s.pool.Query(ctx, s.sql(attemptsSQL), taskID)
	if err != nil {
		return nil, fmt.Errorf("attempts of task %d: %w", taskID, err)
	}
	as, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (task.Attempt, error) { return scanAttempt(r) })
	if err != nil {
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
	err := s.pool.QueryRow(ctx, s.sql(`SELECT 1 FROM $S.`+table+` WHERE id = $1`), id).Scan(&one)
	if err != nil {
		return notFound(err, strings.TrimSuffix(table, "s"), id)
	}
	return nil
}

// GetRun returns a run by id.
func (s *Store) GetRun(ctx context.Context, id int64) (task.Run, error) {
	r, err := scanRun(s.pool.QueryRow(ctx, s.sql(`SELECT `+runCols+` FROM $S.runs WHERE id = $1`), id))
	if err != nil {
		return task.Run{}, notFound(err, "get run", id)
	}
	return r, nil
}

// FindRun returns the run with this key (there is at most one).
func (s *Store) FindRun(ctx context.Context, key string) (task.Run, error) {
	r, err := scanRun(s.pool.QueryRow(ctx, s.sql(findRunSQL), key))
	if err != nil {
		return task.Run{}, notFound(err, "find run with key", fmt.Sprintf("%q", key))
	}
	return r, nil
}

// Edges returns a run's dependency edges.
func (s *Store) Edges(ctx context.Context, runID int64) ([]task.Edge, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT from_task, to_task FROM $S.edges WHERE run_id = $1 ORDER BY to_task, from_task`), runID)
	if err != nil {
		return nil, fmt.Errorf("edges of run %d: %w", runID, err)
	}
	es, err := pgx.CollectRows(rows, pgx.RowToStructByPos[task.Edge])
	if err != nil {
		return nil, fmt.Errorf("edges of run %d: %w", runID, err)
	}
	if len(es) == 0 {
		return nil, s.exists(ctx, "runs", runID)
	}
	return es, nil
}
