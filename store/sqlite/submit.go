package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

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
	err := s.w.do(ctx, func(x *wtx) error {
		if r.Key != "" {
			existing, err := scanRun(x.queryRow(findRunSQL, r.Key))
			if err == nil {
				out, dup = existing, true
				return nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		var err error
		out, err = insertRun(x, r)
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

func insertRun(x *wtx, r task.NewRun) (task.Run, error) {
	state := task.Running
	var finished any
	if len(r.Tasks) == 0 { // nothing to wait for: every task has ended
		state, finished = task.Success, x.now.UnixMicro()
	}
	// Past the largest id pruning deleted (see migration 0012): ids are
	// never handed out twice.
	run, err := scanRun(x.queryRow(`INSERT INTO runs (id, name, key, max_failures, state, created_at, finished_at)
		VALUES ((SELECT max(last, (SELECT coalesce(max(id), 0) FROM runs)) + 1 FROM run_ids), ?, ?, ?, ?, ?, ?)
		RETURNING `+runCols,
		r.Name, nullString(r.Key), r.MaxFailures, string(state), x.now.UnixMicro(), finished))
	if err != nil {
		return task.Run{}, fmt.Errorf("insert run: %w", err)
	}
	ids, err := insertRunTasks(x, run.ID, r.Tasks)
	if err != nil {
		return task.Run{}, err
	}
	return run, insertEdges(x, run.ID, r.Tasks, ids)
}

func insertRunTasks(x *wtx, runID int64, ts []task.NewTask) (map[string]int64, error) {
	ids := make(map[string]int64, len(ts))
	for _, t := range ts {
		if err := keyFree(x, t); err != nil {
			return nil, err
		}
		needs := len(store.Unique(t.Needs))
		state := task.Ready
		if needs > 0 {
			state = task.Pending
		}
		got, err := insertTask(x, t, runID, state, needs, nil)
		if err != nil {
			return nil, err
		}
		ids[t.Name] = got.ID
	}
	return ids, nil
}

// keyFree rejects a run's task whose idempotency key another task holds:
// the run cannot both be new and contain an old task.
func keyFree(x *wtx, t task.NewTask) error {
	if t.IdempotencyKey == "" {
		return nil
	}
	var id int64
	err := x.queryRow(`SELECT id FROM tasks WHERE idempotency_key = ?`, t.IdempotencyKey).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("task %q: idempotency key %q is task %d: %w", t.Name, t.IdempotencyKey, id, task.ErrDuplicate)
}

func insertEdges(x *wtx, runID int64, ts []task.NewTask, ids map[string]int64) error {
	for _, t := range ts {
		for _, n := range store.Unique(t.Needs) {
			_, err := x.exec(`INSERT INTO edges (run_id, from_task, to_task) VALUES (?, ?, ?)`, runID, ids[n], ids[t.Name])
			if err != nil {
				return fmt.Errorf("insert edge %q -> %q: %w", n, t.Name, err)
			}
		}
	}
	return nil
}
