package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// actSQL moves a task for an action, only from the states the action
// allows. The parameters are now and the task's id.
var actSQL = map[task.Action]string{
	task.ActReplay: `UPDATE tasks SET state = 'READY', streak = 0, next_at = ?1, finished_at = NULL
		WHERE id = ?2 AND state = 'DEAD_LETTER' RETURNING ` + taskCols,
	task.ActSkip: `UPDATE tasks SET state = 'SKIPPED', finished_at = ?1
		WHERE id = ?2 AND state = 'DEAD_LETTER' RETURNING ` + taskCols,
	task.ActFail: `UPDATE tasks SET state = 'FAILED', finished_at = ?1
		WHERE id = ?2 AND state = 'DEAD_LETTER' RETURNING ` + taskCols,
	task.ActRetry: `UPDATE tasks SET state = 'READY', ` + freshAttempts + `,
			next_at = ?1, finished_at = NULL
		WHERE id = ?2 AND state IN ('FAILED', 'CANCELLED') AND run_id IS NULL RETURNING ` + taskCols,
	task.ActCancel: `UPDATE tasks SET state = 'CANCELLED', finished_at = ?1, next_at = NULL,
			lease_owner = '', lease_expires = NULL, started_at = NULL
		WHERE id = ?2 AND state IN ('PENDING', 'READY', 'RUNNING', 'RETRYING', 'SENSING', 'DEAD_LETTER')
		RETURNING ` + taskCols,
}

// Act applies an operator's action: replay, skip or fail a DEAD_LETTER
// task, or cancel a task that has not ended (its dependents and the tasks
// it awaits are cancelled, transitively, and a running attempt is closed
// as INTERRUPTED). A task in another state gives a *task.StateError
// (task.ErrWrongState) with its state.
func (s *Store) Act(ctx context.Context, id int64, a task.Action) (task.Task, error) {
	if _, ok := actSQL[a]; !ok {
		return task.Task{}, fmt.Errorf("act %q on task %d: unknown action (want replay, skip, fail, cancel or retry): %w", a, id, task.ErrInvalid)
	}
	var out task.Task
	var stopped []int64
	err := s.w.do(ctx, func(x *wtx) error {
		var err error
		out, stopped, err = act(x, id, a)
		return err
	})
	if err != nil {
		return task.Task{}, fmt.Errorf("%s task %d: %w", a, id, err)
	}
	for _, id := range stopped {
		s.cancels.Send(id)
	}
	return out, nil
}

// WatchCancels makes the store a store.CancelWatcher: it sees the cancels
// of running tasks made through this Store value (this process), not
// those of other processes on the file, which the next heartbeat finds.
func (s *Store) WatchCancels(ctx context.Context) (<-chan int64, error) {
	return s.cancels.Watch(ctx), nil
}

// act applies a; stopped lists the tasks whose running attempts it
// cancelled: the task's, and those of the tasks it awaited (a cancel
// cancels them too, transitively).
func act(x *wtx, id int64, a task.Action) (t task.Task, stopped []int64, err error) {
	if a == task.ActCancel {
		running, err := closeRunning(x, id)
		if err != nil {
			return task.Task{}, nil, err
		}
		if running {
			stopped = append(stopped, id)
		}
	}
	t, err = scanTask(x.queryRow(actSQL[a], x.now.UnixMicro(), id))
	if errors.Is(err, sql.ErrNoRows) {
		return task.Task{}, nil, store.RetryRefusal(a, whyNot(x, id))
	}
	if err != nil {
		return task.Task{}, nil, err
	}
	switch a {
	case task.ActReplay, task.ActRetry:
		x.due = true
		return t, nil, nil
	case task.ActSkip:
		err = satisfy(x, []int64{id})
	case task.ActFail:
		err = blockDownstream(x, []int64{id}, task.UpstreamFailed)
	case task.ActCancel:
		err = blockDownstream(x, []int64{id}, task.Cancelled)
	}
	if err == nil {
		err = endAwaited(x, []int64{id})
	}
	if err == nil && a == task.ActCancel {
		var more []int64
		more, err = cancelAwaited(x, id)
		stopped = append(stopped, more...)
	}
	if err != nil {
		return task.Task{}, nil, err
	}
	return t, stopped, settleRunsOf(x, []int64{id})
}

// cancelAwaited cancels the tasks a cancelled task awaited that have not
// ended, with theirs, and lists the running attempts it stopped.
func cancelAwaited(x *wtx, id int64) ([]int64, error) {
	kids, err := awaitedBy(x, []int64{id})
	if err != nil {
		return nil, err
	}
	var stopped []int64
	for _, k := range kids {
		_, more, err := act(x, k, task.ActCancel)
		var wrong *task.StateError
		if errors.As(err, &wrong) || errors.Is(err, task.ErrNotFound) {
			continue // it ended meanwhile, or was pruned
		}
		if err != nil {
			return nil, fmt.Errorf("cancel task %d, which it awaited: %w", k, err)
		}
		stopped = append(stopped, more...)
	}
	return stopped, nil
}

// closeRunning writes the open attempt of a task being cancelled, if it
// has one, as INTERRUPTED, from the task row before the cancel clears it,
// and says whether it had one.
func closeRunning(x *wtx, id int64) (bool, error) {
	res, err := x.exec(`INSERT INTO attempts (task_id, lease_token, number, worker, started_at, ended_at, outcome, decision)
		SELECT id, lease_token, attempt, lease_owner, started_at, ?, 'INTERRUPTED', 'cancelled' FROM tasks
		WHERE id = ? AND state = 'RUNNING' AND started_at IS NOT NULL`, x.now.UnixMicro(), id)
	if err != nil {
		return false, fmt.Errorf("write the cancelled attempt: %w", err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// whyNot tells a missing task from one in the wrong state.
func whyNot(x *wtx, id int64) error {
	var state task.State
	err := x.queryRow(`SELECT state FROM tasks WHERE id = ?`, id).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
		return task.ErrNotFound
	}
	if err != nil {
		return err
	}
	return &task.StateError{State: state}
}
