package sqlite

import (
	"github.com/grit-run/grit/store"
)

// finishTaskCols are the columns of a VALUES row of finishTasksSQL.
const finishTaskCols = 12

func finishTasksSQL(rows int) string {
	return `WITH f (id, token, state, next_at, refund, error, fingerprint, streak, prev_delay, finished_at, deferred, trace)
AS (` + valuesSQL(rows, finishTaskCols) + `)
UPDATE tasks SET state = f.state, next_at = f.next_at,
	attempt = max(tasks.attempt - f.refund, 0), deferrals = tasks.deferrals + f.deferred, last_error = f.error,
	fingerprint = f.fingerprint, streak = f.streak, prev_delay = f.prev_delay,
	finished_at = f.finished_at, lease_owner = '', lease_expires = NULL, attempt_trace = f.trace
FROM f
WHERE tasks.id = f.id AND tasks.state = 'RUNNING' AND tasks.lease_token = f.token
RETURNING tasks.id, coalesce(tasks.run_id, 0)`
}

// finishTasks moves the tasks of items in one statement, each only if it
// is RUNNING under its item's token, and returns the run (0: none) of each
// task that moved.
func finishTasks(x *wtx, fs []store.Finish, items []int) (map[int64]int64, error) {
	n := padRows(len(items))
	args := make([]any, 0, n*finishTaskCols)
	for _, i := range items {
		args = append(args, finishTaskArgs(x, fs[i])...)
	}
	args = append(args, make([]any, (n-len(items))*finishTaskCols)...) // NULL rows match no task
	rows, err := x.query(finishTasksSQL(n), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	moved := make(map[int64]int64, len(items))
	for rows.Next() {
		var id, run int64
		if err := rows.Scan(&id, &run); err != nil {
			return nil, err
		}
		moved[id] = run
	}
	return moved, rows.Err()
}

func finishTaskArgs(x *wtx, f store.Finish) []any {
	var nextAt, finished any
	if f.State.Waiting() {
		nextAt = x.now.UnixMicro()
		if !f.NextAt.IsZero() {
			nextAt = f.NextAt.UnixMicro()
		}
	} else {
		finished = x.now.UnixMicro() // SUCCESS, FAILED, DEAD_LETTER: it stopped
	}
	refund, deferred := 0, 0
	if f.Refund {
		refund = 1
	}
	if f.Deferred {
		deferred = 1
	}
	return []any{f.TaskID, f.Token, string(f.State), nextAt, refund, f.Error,
		f.Fingerprint, f.Streak, int64(f.PrevDelay), finished, deferred, f.Trace}
}

const closeAttemptCols = 14

func closeAttemptsSQL(rows int) string {
	return `WITH f (task_id, token, ended_at, outcome, class, error, fingerprint,
	exit_code, signal, output, delay, decision, timeout, timeout_source)
AS (` + valuesSQL(rows, closeAttemptCols) + `)
UPDATE attempts SET ended_at = f.ended_at, outcome = f.outcome, class = f.class,
	error = f.error, fingerprint = f.fingerprint, exit_code = f.exit_code,
	signal = f.signal, output = f.output, delay = f.delay, decision = f.decision,
	timeout = f.timeout, timeout_source = f.timeout_source
FROM f
WHERE attempts.task_id = f.task_id AND attempts.lease_token = f.token
RETURNING attempts.task_id`
}

// closeAttempts ends the attempt records of the applied items. A task taken
// over by Rescue has no attempt under the rescuer's token: its interrupted
// attempt keeps its outcome and gets the rescuer's delay and decision.
func closeAttempts(x *wtx, fs []store.Finish, done []int) error {
	n := padRows(len(done))
	args := make([]any, 0, n*closeAttemptCols)
	for _, i := range done {
		args = append(args, closeAttemptArgs(x, fs[i])...)
	}
	args = append(args, make([]any, (n-len(done))*closeAttemptCols)...)
	rows, err := x.query(closeAttemptsSQL(n), args...)
	if err != nil {
		return err
	}
	closed, err := scanIDs(rows)
	if err != nil {
		return err
	}
	return annotateRescued(x, fs, done, closed)
}

func closeAttemptArgs(x *wtx, f store.Finish) []any {
	a := f.Attempt
	ended := x.now.UnixMicro()
	if !a.EndedAt.IsZero() {
		ended = a.EndedAt.UnixMicro()
	}
	var exit any
	if a.ExitCode != nil {
		exit = *a.ExitCode
	}
	return []any{f.TaskID, f.Token, ended, string(f.Outcome()), a.Class, a.Error,
		a.Fingerprint, exit, a.Signal, a.Output, int64(a.Delay), a.Decision, int64(a.Timeout), a.TimeoutSource}
}

func annotateRescued(x *wtx, fs []store.Finish, done []int, closed []int64) error {
	if len(closed) == len(done) {
		return nil
	}
	has := make(map[int64]bool, len(closed))
	for _, id := range closed {
		has[id] = true
	}
	for _, i := range done {
		f := fs[i]
		if has[f.TaskID] {
			continue
		}
		_, err := x.exec(`UPDATE attempts SET delay = ?, decision = ?
			WHERE task_id = ? AND lease_token = (SELECT max(lease_token) FROM attempts WHERE task_id = ?)`,
			int64(f.Attempt.Delay), f.Attempt.Decision, f.TaskID, f.TaskID)
		if err != nil {
			return err
		}
	}
	return nil
}
