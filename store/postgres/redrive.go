package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// A redrive is written in Go, as the other changes of a run are (settling
// it, an operator's action on one of its tasks: propagate.go, act.go):
// the statements are few and each is planned once.

// freshAttempts is what running a task anew resets: an operator's retry
// of a task and a redrive of its run alike, its fair turn included (it is
// stamped again when it is due: docs/engine.md, "Fair claims").
const freshAttempts = `attempt = 0, streak = 0, deferrals = 0, snoozes = 0, waits = 0, prev_delay_ns = 0, vt = NULL`

// redriveSQL sends a run's unsuccessful tasks back to wait: READY now
// when every need is satisfied (needs_left counts the others, kept by
// satisfy), else PENDING behind them. The parameter is the run's id.
const redriveSQL = `UPDATE $S.tasks SET ` + freshAttempts + `,
	state = CASE WHEN needs_left <= 0 THEN 'READY' ELSE 'PENDING' END,
	next_at = CASE WHEN needs_left <= 0 THEN now() END,
	finished_at = NULL, first_started_at = NULL, cancelled_by_run = false,
	lease_owner = '', lease_expires = NULL, started_at = NULL
WHERE run_id = $1 AND (state IN ('FAILED', 'DEAD_LETTER', 'UPSTREAM_FAILED') OR (state = 'CANCELLED' AND cancelled_by_run))
RETURNING id`

// Redrive resumes a run that ended without succeeding (store.Store). The
// run's row is locked first, as settleRun locks it, so that a task of
// the run ending at the same time settles the run after the redrive has
// committed, and sees it.
func (s *Store) Redrive(ctx context.Context, runID int64) (task.Redriven, error) {
	var out task.Redriven
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = s.redrive(ctx, tx, runID)
		return err
	})
	if err != nil {
		return task.Redriven{}, fmt.Errorf("redrive run %d: %w", runID, err)
	}
	return out, nil
}

func (s *Store) redrive(ctx context.Context, tx pgx.Tx, id int64) (task.Redriven, error) {
	run, err := s.lockRun(ctx, tx, id)
	if err != nil {
		return task.Redriven{}, err
	}
	if run.State == task.Running || run.State == task.Success {
		return task.Redriven{}, store.RedriveRefusal(id, run.State, false)
	}
	ids, err := scanIDs(tx.Query(ctx, s.sql(redriveSQL), id))
	if err != nil {
		return task.Redriven{}, err
	}
	if len(ids) == 0 {
		return task.Redriven{}, store.RedriveRefusal(id, run.State, true)
	}
	if err := s.reopenRun(ctx, tx, id); err != nil {
		return task.Redriven{}, err
	}
	if run, err = s.lockRun(ctx, tx, id); err != nil {
		return task.Redriven{}, err
	}
	if run.State != task.Running {
		return task.Redriven{}, store.RedriveRefusal(id, run.State, true)
	}
	// Those held back by an operator's cancel were not sent back after all.
	if ids, err = scanIDs(tx.Query(ctx, s.sql(`SELECT id FROM $S.tasks WHERE id = ANY ($1) AND state IN ('READY', 'PENDING') ORDER BY id`), ids)); err != nil {
		return task.Redriven{}, err
	}
	return task.Redriven{Run: run, Tasks: ids}, s.notify(ctx, tx)
}

// reopenRun makes a run whose tasks were sent back to wait RUNNING again.
// The tasks an operator cancelled hold back the redriven tasks that need
// them; and a run that is left with nothing to run ends again at once.
func (s *Store) reopenRun(ctx context.Context, tx pgx.Tx, id int64) error {
	cancelled, err := scanIDs(tx.Query(ctx, s.sql(`SELECT id FROM $S.tasks WHERE run_id = $1 AND state = 'CANCELLED'`), id))
	if err != nil {
		return err
	}
	if err := s.blockDownstream(ctx, tx, cancelled, task.Cancelled); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, s.sql(`UPDATE $S.runs SET state = 'RUNNING', finished_at = NULL WHERE id = $1`), id); err != nil {
		return err
	}
	return s.settleRun(ctx, tx, id)
}

// lockRun reads a run and locks its row for the transaction.
func (s *Store) lockRun(ctx context.Context, tx pgx.Tx, id int64) (task.Run, error) {
	run, err := scanRun(tx.QueryRow(ctx, s.sql(`SELECT `+runCols+` FROM $S.runs WHERE id = $1 FOR NO KEY UPDATE`), id))
	if errors.Is(err, pgx.ErrNoRows) {
		return task.Run{}, task.ErrNotFound
	}
	return run, err
}
