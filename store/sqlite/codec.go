package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/grit-run/grit/task"
)

// Times are stored as unix microseconds (UTC), NULL for the zero time;
// durations as nanoseconds.

func micros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

func fromMicros(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMicro(v.Int64).UTC()
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// jsonList encodes ids or names for a json_each(?) parameter, so that a
// statement with an IN list keeps one text and stays prepared.
func jsonList[T any](vs []T) string {
	b, err := json.Marshal(vs)
	if err != nil {
		panic(err) // ints and strings always encode
	}
	return string(b)
}

type scanner interface{ Scan(dest ...any) error }

// taskCols are the columns scanTask reads, in its order.
const taskCols = `id, run_id, name, kind, args, queue, group_name, priority, state,
	policy, poison_after, timeout, grace, attempt, next_at, prev_delay,
	lease_owner, lease_token, lease_expires, last_error, fingerprint, streak,
	idempotency_key, created_at, first_started_at, finished_at, tenant, deferrals, trace, attempt_trace, snoozes, waits, origin`

func scanTask(r scanner) (task.Task, error) {
	var t task.Task
	var runID, nextAt, leaseExp, created, started, finished sql.NullInt64
	var key sql.NullString
	var args []byte
	var timeout, grace, prevDelay int64
	err := r.Scan(&t.ID, &runID, &t.Name, &t.Kind, &args, &t.Queue, &t.Group,
		&t.Priority, &t.State, &t.Policy, &t.PoisonAfter, &timeout, &grace,
		&t.Attempt, &nextAt, &prevDelay, &t.LeaseOwner, &t.LeaseToken, &leaseExp,
		&t.LastError, &t.Fingerprint, &t.Streak, &key, &created, &started, &finished, &t.Tenant, &t.Deferrals,
		&t.Trace, &t.AttemptTrace, &t.Snoozes, &t.Waits, &t.Origin)
	if err != nil {
		return task.Task{}, err
	}
	t.RunID = runID.Int64
	if t.State != task.Running {
		t.LeaseOwner = "" // a plain success keeps its attempt's worker on the row (see succeedSQL)
	}
	if args != nil {
		t.Args = json.RawMessage(args)
	}
	t.Timeout, t.Grace, t.PrevDelay = time.Duration(timeout), time.Duration(grace), time.Duration(prevDelay)
	t.NextAt, t.LeaseExpires = fromMicros(nextAt), fromMicros(leaseExp)
	t.IdempotencyKey = key.String
	t.CreatedAt, t.FirstStartedAt, t.FinishedAt = fromMicros(created), fromMicros(started), fromMicros(finished)
	return t, nil
}

func scanTasks(rows *sql.Rows) ([]task.Task, error) {
	defer rows.Close()
	var ts []task.Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	return ts, rows.Err()
}

const attemptCols = `task_id, number, worker, lease_token, started_at, ended_at,
	outcome, class, error, fingerprint, exit_code, signal, output, delay, decision,
	timeout, timeout_source`

func scanAttempt(r scanner) (task.Attempt, error) {
	var a task.Attempt
	var started, ended, exit sql.NullInt64
	var delay, timeout int64
	err := r.Scan(&a.TaskID, &a.Number, &a.Worker, &a.LeaseToken, &started, &ended,
		&a.Outcome, &a.Class, &a.Error, &a.Fingerprint, &exit, &a.Signal, &a.Output,
		&delay, &a.Decision, &timeout, &a.TimeoutSource)
	if err != nil {
		return task.Attempt{}, err
	}
	a.StartedAt, a.EndedAt = fromMicros(started), fromMicros(ended)
	if exit.Valid {
		code := int(exit.Int64)
		a.ExitCode = &code
	}
	a.Delay, a.Timeout = time.Duration(delay), time.Duration(timeout)
	return a, nil
}

const runCols = `id, name, key, max_failures, state, created_at, finished_at`

func scanRun(r scanner) (task.Run, error) {
	var run task.Run
	var key sql.NullString
	var created, finished sql.NullInt64
	err := r.Scan(&run.ID, &run.Name, &key, &run.MaxFailures, &run.State, &created, &finished)
	if err != nil {
		return task.Run{}, err
	}
	run.Key = key.String
	run.CreatedAt, run.FinishedAt = fromMicros(created), fromMicros(finished)
	return run, nil
}

const workerCols = `id, host, pid, version, started_at, last_seen, active, last_error, last_error_at, failures, kinds`

func scanWorker(r scanner) (task.Worker, error) {
	var w task.Worker
	var started, seen, errAt sql.NullInt64
	var kinds string
	err := r.Scan(&w.ID, &w.Host, &w.PID, &w.Version, &started, &seen, &w.Active, &w.LastError, &errAt, &w.Failures, &kinds)
	if err != nil {
		return task.Worker{}, err
	}
	if err := json.Unmarshal([]byte(kinds), &w.Kinds); err != nil {
		return task.Worker{}, fmt.Errorf("worker %s: kinds %q: %w", w.ID, kinds, err)
	}
	w.StartedAt, w.LastSeen, w.LastErrorAt = fromMicros(started), fromMicros(seen), fromMicros(errAt)
	return w, nil
}
