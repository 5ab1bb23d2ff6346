package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// actSQL moves a task for an action, only from the states the action
// allows. The parameter is the task's id.
var actSQL = map[task.Action]string{
	task.ActReplay: `UPDATE $S.tasks t SET state = 'READY', streak = 0, next_at = now(), finished_at = NULL
		WHERE id = $1 AND state = 'DEAD_LETTER' RETURNING ` + taskColsOf,
	task.ActSkip: `UPDATE $S.tasks t SET state = 'SKIPPED', finished_at = now()
		WHERE id = $1 AND state = 'DEAD_LETTER' RETURNING ` + taskColsOf,
	task.ActFail: `UPDATE $S.tasks t SET state = 'FAILED', finished_at = now()
		WHERE id = $1 AND state = 'DEAD_LETTER' RETURNING ` + taskColsOf,
	task.ActRetry: `UPDATE $S.tasks t SET state = 'READY', ` + freshAttempts + `,
			next_at = now(), finished_at = NULL
		WHERE id = $1 AND state IN ('FAILED', 'CANCELLED') AND run_id IS NULL RETURNING ` + taskColsOf,
	task.ActCancel: `UPDATE $S.tasks t SET state = 'CANCELLED', finished_at = now(), next_at = NULL,
			lease_owner = '', lease_expires = NULL, started_at = NULL
		WHERE id = $1 AND state IN ('PENDING', 'READY', 'RUNNING', 'RETRYING', 'SENSING', 'DEAD_LETTER')
		RETURNING ` + taskColsOf,
}

// Act applies an operator's action: replay, skip or fail a DEAD_LETTER
// task, or cancel a task that has not ended (its dependents and the tasks
// it awaits are cancelled, transitively, and a running attempt is closed
// as INTERRUPTED: its worker is fenced off, as its task is no longer
// RUNNING). A task in another state gives a *task.StateError
// (task.ErrWrongState) with its state.
func (s *Store) Act(ctx context.Context, id int64, a task.Action) (task.Task, error) {
	if _, ok := actSQL[a]; !ok {
		return task.Task{}, fmt.Errorf("act %q on task %d: unknown action (want replay, skip, fail, cancel or retry): %w", a, id, task.ErrInvalid)
	}
	var out task.Task
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = s.act(ctx, tx, id, a)
		return err
	})
	if err != nil {
		return task.Task{}, fmt.Errorf("%s task %d: %w", a, id, err)
	}
	return out, nil
}

func (s *Store) act(ctx context.Context, tx pgx.Tx, id int64, a task.Action) (task.Task, error) {
	if a == task.ActCancel {
		running, err := s.closeRunning(ctx, tx, id)
		if err != nil {
			return task.Task{}, err
		}
		if running {
			// WatchCancels: the worker that holds it stops it now, on commit.
			if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, s.cancelChannel, strconv.FormatInt(id, 10)); err != nil {
				return task.Task{}, err
			}
		}
	}
	t, err := scanTask(tx.QueryRow(ctx, s.sql(actSQL[a]), id))
	if errors.Is(err, pgx.ErrNoRows) {
		return task.Task{}, store.RetryRefusal(a, s.whyNot(ctx, tx, id))
	}
	if err != nil {
		return task.Task{}, err
	}
	wake := false
	switch a {
	case task.ActReplay, task.ActRetry:
		return t, s.notify(ctx, tx)
	case task.ActSkip:
		wake, err = s.satisfy(ctx, tx, []int64{id})
	case task.ActFail:
		err = s.blockDownstream(ctx, tx, []int64{id}, task.UpstreamFailed)
	case task.ActCancel:
		err = s.cancelled(ctx, tx, id)
	}
	if err == nil {
		var woke bool
		woke, err = s.endAwaited(ctx, tx, []int64{id})
		wake = wake || woke
	}
	if err == nil && wake {
		err = s.notify(ctx, tx)
	}
	if err != nil {
		return task.Task{}, err
	}
	return t, s.settleRunsOf(ctx, tx, []int64{id})
}

// closeRunning writes the open attempt of a task being cancelled, if it
// has one, as INTERRUPTED, from the task row before the cancel clears it,
// and says whether it had one.
func (s *Store) closeRunning(ctx context.Context, tx pgx.Tx, id int64) (bool, error) {
	tag, err := tx.Exec(ctx, s.sql(`INSERT INTO $S.attempts (task_id, lease_token, number, worker, started_at, ended_at, outcome, decision)
		SELECT id, lease_token, attempt, lease_owner, started_at, now(), 'INTERRUPTED', 'cancelled' FROM $S.tasks
		WHERE id = $1 AND state = 'RUNNING' AND started_at IS NOT NULL
		FOR UPDATE`), id)
	return tag.RowsAffected() > 0, err
}

// cancelled cancels the dependents of a cancelled task, and the tasks it
// awaited that have not ended, with theirs in turn.
func (s *Store) cancelled(ctx context.Context, tx pgx.Tx, id int64) error {
	if err := s.blockDownstream(ctx, tx, []int64{id}, task.Cancelled); err != nil {
		return err
	}
	kids, err := s.awaitedBy(ctx, tx, id)
	if err != nil {
		return err
	}
	for _, k := range kids {
		_, err := s.act(ctx, tx, k, task.ActCancel)
		var wrong *task.StateError
		if errors.As(err, &wrong) || errors.Is(err, task.ErrNotFound) {
			continue // it ended meanwhile, or was pruned
		}
		if err != nil {
			return fmt.Errorf("cancel task %d, which it awaited: %w", k, err)
		}
	}
	return nil
}

// whyNot tells a missing task from one in the wrong state.
func (s *Store) whyNot(ctx context.Context, tx pgx.Tx, id int64) error {
	var state task.State
	err := tx.QueryRow(ctx, s.sql(`SELECT state FROM $S.tasks WHERE id = $1`), id).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return task.ErrNotFound
	}
	if err != nil {
		return err
	}
	return &task.StateError{State: state}
}
