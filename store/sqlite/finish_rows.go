package sqlite

import (
	"github.com/grit-run/grit/store"
)

// finishTasks moves the tasks of items, each only if it is RUNNING under
// its item's token, writes their attempts, and returns the run (0: none)
// of each task that moved. A plain success (store.Finish.PlainSuccess)
// writes its task row alone: its attempt stays there. Any other ending
// writes its attempt's row, from the task row as it was, then moves the
// task.
func finishTasks(x *wtx, fs []store.Finish, items []int) (map[int64]int64, error) {
	var plain, rest []int
	for _, i := range items {
		if fs[i].PlainSuccess() {
			plain = append(plain, i)
		} else {
			rest = append(rest, i)
		}
	}
	moved := make(map[int64]int64, len(items))
	rescued, err := succeed(x, fs, plain, moved)
	if err != nil {
		return nil, err
	}
	more, err := endAttempts(x, fs, rest, moved)
	if err != nil {
		return nil, err
	}
	return moved, annotateRescued(x, fs, append(rescued, more...))
}

// succeedCols are the columns of a VALUES row of succeedSQL.
const succeedCols = 3

// succeedSQL ends plain successes on the task row alone: the attempt
// stays there as it was while it ran (attempt, lease_token, lease_owner,
// started_at) and ends at finished_at, which is when the attempt ended.
// It returns, with each task that moved, whether it held no open attempt
// (started_at NULL: Rescue took it over and wrote its interrupted
// attempt).
func succeedSQL(rows int) string {
	return `WITH f (id, token, finished_at) AS (` + valuesSQL(rows, succeedCols) + `)
UPDATE tasks SET state = 'SUCCESS', next_at = NULL, finished_at = f.finished_at,
	last_error = '', fingerprint = '', streak = 0, prev_delay = 0, lease_expires = NULL
FROM f
WHERE tasks.id = f.id AND tasks.state = 'RUNNING' AND tasks.lease_token = f.token
RETURNING tasks.id, coalesce(tasks.run_id, 0), tasks.started_at IS NULL`
}

// succeed applies the plain successes of items, adding each task that
// moved to moved, and returns the items whose tasks held no open attempt.
func succeed(x *wtx, fs []store.Finish, items []int, moved map[int64]int64) (rescued []int, err error) {
	if len(items) == 0 {
		return nil, nil
	}
	n := padRows(len(items))
	args := make([]any, 0, n*succeedCols)
	for _, i := range items {
		args = append(args, fs[i].TaskID, fs[i].Token, endedAt(x, fs[i]))
	}
	args = append(args, make([]any, (n-len(items))*succeedCols)...) // NULL rows match no task
	rows, err := x.query(succeedSQL(n), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	closed := map[int64]bool{}
	for rows.Next() {
		var id, run int64
		var none bool
		if err := rows.Scan(&id, &run, &none); err != nil {
			return nil, err
		}
		moved[id], closed[id] = run, none
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, i := range items {
		if closed[fs[i].TaskID] {
			rescued = append(rescued, i)
		}
	}
	return rescued, nil
}

// endAttempts writes the attempts of items whose tasks are RUNNING under
// their tokens, then moves those tasks, adding each to moved, and returns
// the items whose tasks moved without an open attempt to write. A claim
// given back before its attempt began (store.Finish.Waited) writes no
// attempt: it is counted on the task.
func endAttempts(x *wtx, fs []store.Finish, items []int, moved map[int64]int64) (rescued []int, err error) {
	if len(items) == 0 {
		return nil, nil
	}
	var began []int
	for _, i := range items {
		if !fs[i].Waited {
			began = append(began, i)
		}
	}
	written := map[int64]bool{}
	if len(began) > 0 {
		if written, err = writeAttempts(x, fs, began); err != nil {
			return nil, err
		}
	}
	if err := endTasks(x, fs, items, moved); err != nil {
		return nil, err
	}
	for _, i := range began {
		if _, ok := moved[fs[i].TaskID]; ok && !written[fs[i].TaskID] {
			rescued = append(rescued, i)
		}
	}
	return rescued, nil
}

// writeAttemptCols are the columns of a VALUES row of writeAttemptsSQL.
const writeAttemptCols = 14

// writeAttemptsSQL writes the row of each attempt that ends, once, from
// its task row (its number, worker and start) and the item. It runs
// before endTasksSQL, which clears them, and checks what that checks
// (RUNNING under the item's token), so in the one transaction the two
// select the same tasks. A task taken over by Rescue holds no open
// attempt (started_at NULL): the rescue wrote it.
func writeAttemptsSQL(rows int) string {
	return `WITH f (id, token, ended_at, outcome, class, error, fingerprint,
	exit_code, signal, output, delay, decision, timeout, timeout_source)
AS (` + valuesSQL(rows, writeAttemptCols) + `)
INSERT INTO attempts (task_id, lease_token, number, worker, started_at, ended_at, outcome,
	class, error, fingerprint, exit_code, signal, output, delay, decision, timeout, timeout_source)
SELECT t.id, t.lease_token, t.attempt, t.lease_owner, t.started_at, f.ended_at, f.outcome,
	f.class, f.error, f.fingerprint, f.exit_code, f.signal, f.output, f.delay, f.decision, f.timeout, f.timeout_source
FROM f CROSS JOIN tasks t ON t.id = f.id
WHERE t.state = 'RUNNING' AND t.lease_token = f.token AND t.started_at IS NOT NULL
RETURNING task_id`
}

// writeAttempts writes the attempts of items and returns the tasks whose
// attempt it wrote.
func writeAttempts(x *wtx, fs []store.Finish, items []int) (map[int64]bool, error) {
	n := padRows(len(items))
	args := make([]any, 0, n*writeAttemptCols)
	for _, i := range items {
		args = append(args, writeAttemptArgs(x, fs[i])...)
	}
	args = append(args, make([]any, (n-len(items))*writeAttemptCols)...)
	rows, err := x.query(writeAttemptsSQL(n), args...)
	if err != nil {
		return nil, err
	}
	ids, err := scanIDs(rows)
	if err != nil {
		return nil, err
	}
	written := make(map[int64]bool, len(ids))
	for _, id := range ids {
		written[id] = true
	}
	return written, nil
}

func writeAttemptArgs(x *wtx, f store.Finish) []any {
	a := f.Attempt
	var exit any
	if a.ExitCode != nil {
		exit = *a.ExitCode
	}
	return []any{f.TaskID, f.Token, endedAt(x, f), string(f.Outcome()), a.Class, a.Error,
		a.Fingerprint, exit, a.Signal, a.Output, int64(a.Delay), a.Decision, int64(a.Timeout), a.TimeoutSource}
}

// endedAt is when f's attempt ended: as the worker reported, or now.
func endedAt(x *wtx, f store.Finish) int64 {
	if f.Attempt.EndedAt.IsZero() {
		return x.now.UnixMicro()
	}
	return f.Attempt.EndedAt.UnixMicro()
}

// endTaskCols are the columns of a VALUES row of endTasksSQL.
const endTaskCols = 15

// endTasksSQL moves the tasks of the items that are not plain successes,
// and closes their attempts on the task row (started_at NULL):
// writeAttemptsSQL wrote them.
func endTasksSQL(rows int) string {
	return `WITH f (id, token, state, next_at, refund, error, fingerprint, streak, prev_delay, finished_at, deferred, trace, waited, awaits, snoozed)
AS (` + valuesSQL(rows, endTaskCols) + `)
UPDATE tasks SET state = f.state, next_at = f.next_at,
	attempt = max(tasks.attempt - f.refund, 0), deferrals = tasks.deferrals + f.deferred, last_error = f.error,
	waits = tasks.waits + f.waited,
	snoozes = tasks.snoozes + f.snoozed, awaits = f.awaits, awaits_left = 0,
	fingerprint = f.fingerprint, streak = f.streak, prev_delay = f.prev_delay,
	finished_at = f.finished_at, lease_owner = '', lease_expires = NULL, started_at = NULL, attempt_trace = f.trace
FROM f
WHERE tasks.id = f.id AND tasks.state = 'RUNNING' AND tasks.lease_token = f.token
RETURNING tasks.id, coalesce(tasks.run_id, 0)`
}

// endTasks moves the tasks of items in one statement, adding each task
// that moved, with its run (0: none), to moved.
func endTasks(x *wtx, fs []store.Finish, items []int, moved map[int64]int64) error {
	n := padRows(len(items))
	args := make([]any, 0, n*endTaskCols)
	for _, i := range items {
		args = append(args, endTaskArgs(x, fs[i])...)
	}
	args = append(args, make([]any, (n-len(items))*endTaskCols)...) // NULL rows match no task
	rows, err := x.query(endTasksSQL(n), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, run int64
		if err := rows.Scan(&id, &run); err != nil {
			return err
		}
		moved[id] = run
	}
	return rows.Err()
}

func endTaskArgs(x *wtx, f store.Finish) []any {
	var nextAt, finished any
	if f.State.Waiting() {
		nextAt = x.now.UnixMicro()
		if !f.NextAt.IsZero() {
			nextAt = f.NextAt.UnixMicro()
		}
	} else {
		finished = x.now.UnixMicro() // SUCCESS, FAILED, DEAD_LETTER: it stopped
	}
	refund, deferred, waited, snoozed := 0, 0, 0, 0
	if f.Refund || f.Waited {
		refund = 1
	}
	if f.Deferred {
		deferred = 1
	}
	if f.Waited {
		waited = 1
	}
	if f.Snoozed() {
		snoozed = 1
	}
	var awaits any
	if f.Awaits != "" {
		awaits = f.Awaits
	}
	return []any{f.TaskID, f.Token, string(f.State), nextAt, refund, f.Error,
		f.Fingerprint, f.Streak, int64(f.PrevDelay), finished, deferred, f.Trace, waited, awaits, snoozed}
}

// annotateRescued gives the interrupted attempt of each task Rescue took
// over, which the rescue wrote, the rescuer's delay and decision; it
// keeps its outcome.
func annotateRescued(x *wtx, fs []store.Finish, rescued []int) error {
	for _, i := range rescued {
		f := fs[i]
		_, err := x.exec(`UPDATE attempts SET delay = ?, decision = ?
			WHERE task_id = ? AND lease_token = (SELECT max(lease_token) FROM attempts WHERE task_id = ?)`,
			int64(f.Attempt.Delay), f.Attempt.Decision, f.TaskID, f.TaskID)
		if err != nil {
			return err
		}
	}
	return nil
}
