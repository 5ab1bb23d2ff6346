package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// freshAttempts is what running a task anew resets: an operator's retry
// of a task and a redrive of its run alike, its fair turn included (it is
// stamped again when it is due: docs/engine.md, "Fair claims").
const freshAttempts = `attempt = 0, streak = 0, deferrals = 0, snoozes = 0, waits = 0, prev_delay = 0, vt = NULL`

// redriveSQL sends a run's unsuccessful tasks back to wait: READY now
// when every need is satisfied (needs_left counts the others, kept by
// satisfy), else PENDING behind them. The parameters are now and the
// run's id.
const redriveSQL = `UPDATE tasks SET ` + freshAttempts + `,
	state = CASE WHEN needs_left <= 0 THEN 'READY' ELSE 'PENDING' END,
	next_at = CASE WHEN needs_left <= 0 THEN ?1 END,
	finished_at = NULL, first_started_at = NULL, cancelled_by_run = 0,
	lease_owner = '', lease_expires = NULL, started_at = NULL
WHERE run_id = ?2 AND (state IN ('FAILED', 'DEAD_LETTER', 'UPSTREAM_FAILED') OR (state = 'CANCELLED' AND cancelled_by_run))
RETURNING id`

// Redrive resumes a run that ended without succeeding (store.Store).
func (s *Store) Redrive(ctx context.Context, runID int64) (task.Redriven, error) {
	var out task.Redriven
	err := s.w.do(ctx, func(x *wtx) error {
		var err error
		out, err = redrive(x, runID)
		return err
	})
	if err != nil {
		return task.Redriven{}, fmt.Errorf("redrive run %d: %w", runID, err)
	}
	return out, nil
}

func redrive(x *wtx, id int64) (task.Redriven, error) {
	run, err := getRun(x, id)
	if err != nil {
		return task.Redriven{}, err
	}
	if run.State == task.Running || run.State == task.Success {
		return task.Redriven{}, store.RedriveRefusal(id, run.State, false)
	}
	ids, err := queryIDs(x, redriveSQL, x.now.UnixMicro(), id)
	if err != nil {
		return task.Redriven{}, err
	}
	if len(ids) == 0 {
		return task.Redriven{}, store.RedriveRefusal(id, run.State, true)
	}
	if err := reopenRun(x, id); err != nil {
		return task.Redriven{}, err
	}
	if run, err = getRun(x, id); err != nil {
		return task.Redriven{}, err
	}
	if run.State != task.Running {
		return task.Redriven{}, store.RedriveRefusal(id, run.State, true)
	}
	// Those held back by an operator's cancel were not sent back after all.
	if ids, err = queryIDs(x, `SELECT id FROM tasks WHERE id IN (SELECT value FROM json_each(?)) AND state IN ('READY', 'PENDING') ORDER BY id`, jsonList(ids)); err != nil {
		return task.Redriven{}, err
	}
	x.due = true
	return task.Redriven{Run: run, Tasks: ids}, nil
}

// reopenRun makes a run whose tasks were sent back to wait RUNNING again.
// The tasks an operator cancelled hold back the redriven tasks that need
// them; and a run that is left with nothing to run ends again at once.
func reopenRun(x *wtx, id int64) error {
	cancelled, err := queryIDs(x, `SELECT id FROM tasks WHERE run_id = ? AND state = 'CANCELLED'`, id)
	if err != nil {
		return err
	}
	if err := blockDownstream(x, cancelled, task.Cancelled); err != nil {
		return err
	}
	if _, err := x.exec(`UPDATE runs SET state = 'RUNNING', finished_at = NULL WHERE id = ?`, id); err != nil {
		return err
	}
	return settleRun(x, id)
}

func getRun(x *wtx, id int64) (task.Run, error) {
	run, err := scanRun(x.queryRow(`SELECT `+runCols+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return task.Run{}, task.ErrNotFound
	}
	return run, err
}

func queryIDs(x *wtx, q string, args ...any) ([]int64, error) {
	rows, err := x.query(q, args...)
	if err != nil {
		return nil, err
	}
	return scanIDs(rows)
}
