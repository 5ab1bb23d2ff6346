package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/store"
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

// GetTask returns a task by id.
func (s *Store) GetTask(ctx context.Context, id int64) (task.Task, error) {
	t, err := scanTask(s.pool.QueryRow(ctx, s.sql(`SELECT `+taskCols+` FROM $S.tasks WHERE id = $1`), id))
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
		args = append(args, arg)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if f.RunID != 0 {
		add("run_id = $%d", f.RunID)
	}
	if len(f.States) > 0 {
		states := make([]string, len(f.States))
		for i, st := range f.States {
			states[i] = string(st)
		}
		add("state = ANY($%d::text[])", states)
	}
	if f.Kind != "" {
		add("kind = $%d", f.Kind)
	}
	if f.Queue != "" {
		add("queue = $%d", f.Queue)
	}
	add("id > $%d", f.AfterID)
	q := `SELECT ` + taskCols + ` FROM $S.tasks WHERE ` + strings.Join(where, " AND ") + ` ORDER BY id`
	if f.Limit > 0 {
		args = append(args, f.Limit)
		q += fmt.Sprintf(` LIMIT $%d`, len(args))
	}
	ts, err := scanTasks(s.pool.Query(ctx, s.sql(q), args...))
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return ts, nil
}

// attemptsSQL lists a task's attempts: the rows of those written to
// attempts, the open one, which lives on the task row until it ends, and a
// plain success's, which stays there (see succeedSQL): a task row with a
// started_at holds an attempt that has no row.
const attemptsSQL = `SELECT ` + attemptCols + ` FROM $S.attempts WHERE task_id = $1
UNION ALL
SELECT id, attempt, lease_owner, lease_token, started_at,
	CASE state WHEN 'SUCCESS' THEN finished_at END, CASE state WHEN 'SUCCESS' THEN 'SUCCESS' ELSE 'RUNNING' END,
	'', '', '', NULL, '', '', 0, ''
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
func (s *Store) Edges(ctx context.Context, runID int64) ([]store.Edge, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT from_task, to_task FROM $S.edges WHERE run_id = $1 ORDER BY to_task, from_task`), runID)
	if err != nil {
		return nil, fmt.Errorf("edges of run %d: %w", runID, err)
	}
	es, err := pgx.CollectRows(rows, pgx.RowToStructByPos[store.Edge])
	if err != nil {
		return nil, fmt.Errorf("edges of run %d: %w", runID, err)
	}
	if len(es) == 0 {
		return nil, s.exists(ctx, "runs", runID)
	}
	return es, nil
}
