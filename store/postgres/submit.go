package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

const findRunSQL = `SELECT ` + runCols + ` FROM $S.runs WHERE key = $1 ORDER BY id DESC LIMIT 1`

// insertRunSQL inserts a run unless its key is taken. A run without tasks
// has nothing to wait for: it is SUCCESS at once.
const insertRunSQL = `INSERT INTO $S.runs (name, key, max_failures, state, finished_at)
VALUES ($1, $2, $3, CASE WHEN $4 THEN 'SUCCESS' ELSE 'RUNNING' END, CASE WHEN $4 THEN now() END)
ON CONFLICT (key) WHERE key IS NOT NULL DO NOTHING
RETURNING ` + runCols

// SubmitRun inserts a run, its tasks and their needs edges in one
// transaction. A run whose Key is taken is not inserted again: the existing
// run is returned with an error matching task.ErrDuplicate. A task of the
// run whose IdempotencyKey is taken fails the whole run with
// task.ErrDuplicate.
func (s *Store) SubmitRun(ctx context.Context, r task.NewRun) (task.Run, error) {
	if err := store.ValidateRun(r); err != nil {
		return task.Run{}, fmt.Errorf("submit run: %w", err)
	}
	var out task.Run
	var dup bool
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		out, dup, err = s.submit(ctx, tx, r)
		return err
	})
	switch {
	case err != nil:
		return task.Run{}, fmt.Errorf("submit run %q: %w", r.Name, err)
	case dup:
		return out, fmt.Errorf("submit run %q: key %q is run %d: %w", r.Name, r.Key, out.ID, task.ErrDuplicate)
	}
	return out, nil
}

func (s *Store) submit(ctx context.Context, tx pgx.Tx, r task.NewRun) (task.Run, bool, error) {
	run, err := scanRun(tx.QueryRow(ctx, s.sql(insertRunSQL), r.Name, nullText(r.Key), r.MaxFailures, len(r.Tasks) == 0))
	if errors.Is(err, pgx.ErrNoRows) { // the key is taken: ON CONFLICT waited for its run to commit
		run, err = scanRun(tx.QueryRow(ctx, s.sql(findRunSQL), r.Key))
		if err != nil {
			return task.Run{}, false, fmt.Errorf("find run with key %q: %w", r.Key, err)
		}
		return run, true, nil
	}
	if err != nil {
		return task.Run{}, false, fmt.Errorf("insert run: %w", err)
	}
	ids, ready, err := s.insertRunTasks(ctx, tx, run.ID, r.Tasks)
	if err != nil {
		return task.Run{}, false, err
	}
	if err := s.insertEdges(ctx, tx, run.ID, r.Tasks, ids); err != nil {
		return task.Run{}, false, err
	}
	if ready {
		if err := s.notify(ctx, tx); err != nil {
			return task.Run{}, false, err
		}
	}
	return run, false, nil
}

// insertRunTasks inserts a run's tasks and returns their ids by name, and
// whether any is READY.
func (s *Store) insertRunTasks(ctx context.Context, tx pgx.Tx, runID int64, ts []task.NewTask) (map[string]int64, bool, error) {
	rows := make([]newRow, len(ts))
	ready := false
	for i, t := range ts {
		needs := len(store.Unique(t.Needs))
		rows[i] = newRow{t: t, state: task.Ready, needsLeft: needs, at: i}
		if needs > 0 {
			rows[i].state = task.Pending
		} else {
			ready = true
		}
	}
	got, err := s.insertTasks(ctx, tx, insertTasksSQL, runID, rows)
	if err != nil {
		return nil, false, err
	}
	ids := make(map[string]int64, len(ts))
	for i, t := range ts {
		inserted, ok := got[i]
		if !ok {
			return nil, false, s.keyTaken(ctx, tx, t)
		}
		ids[t.Name] = inserted.ID
	}
	return ids, ready, nil
}

// keyTaken is the error for a run's task whose idempotency key another task
// holds: the run cannot both be new and contain an old task.
func (s *Store) keyTaken(ctx context.Context, tx pgx.Tx, t task.NewTask) error {
	var id int64
	err := tx.QueryRow(ctx, s.sql(`SELECT id FROM $S.tasks WHERE idempotency_key = $1`), t.IdempotencyKey).Scan(&id)
	if err != nil {
		return fmt.Errorf("task %q: idempotency key %q is taken: %w", t.Name, t.IdempotencyKey, task.ErrDuplicate)
	}
	return fmt.Errorf("task %q: idempotency key %q is task %d: %w", t.Name, t.IdempotencyKey, id, task.ErrDuplicate)
}

func (s *Store) insertEdges(ctx context.Context, tx pgx.Tx, runID int64, ts []task.NewTask, ids map[string]int64) error {
	var from, to []int64
	for _, t := range ts {
		for _, n := range store.Unique(t.Needs) {
			from, to = append(from, ids[n]), append(to, ids[t.Name])
		}
	}
	if len(from) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, s.sql(`INSERT INTO $S.edges (run_id, from_task, to_task)
		SELECT $1, f, t FROM unnest($2::bigint[], $3::bigint[]) AS e (f, t)`), runID, from, to)
	if err != nil {
		return fmt.Errorf("insert edges: %w", err)
	}
	return nil
}
