package postgres

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/grit-run/grit/task"
)

// Times are timestamptz, NULL for the zero time, and read back in UTC;
// durations are bigint nanoseconds.

func tstz(t time.Time) pgtype.Timestamptz {
	return pgtype.Timestamptz{Time: t, Valid: !t.IsZero()}
}

func fromTS(v pgtype.Timestamptz) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return v.Time.UTC()
}

func nullText(s string) pgtype.Text { return pgtype.Text{String: s, Valid: s != ""} }

// taskCols are the columns scanTask reads, in its order.
const taskCols = `id, run_id, name, kind, args, queue, group_name, priority, state,
	policy, poison_after, timeout_ns, grace_ns, attempt, next_at, prev_delay_ns,
	lease_owner, lease_token, lease_expires, last_error, fingerprint, streak,
	idempotency_key, created_at, first_started_at, finished_at, tenant, deferrals, trace, attempt_trace, snoozes, waits, origin`

// taskColsOf is taskCols qualified by a table alias, "t".
const taskColsOf = `t.id, t.run_id, t.name, t.kind, t.args, t.queue, t.group_name, t.priority, t.state,
	t.policy, t.poison_after, t.timeout_ns, t.grace_ns, t.attempt, t.next_at, t.prev_delay_ns,
	t.lease_owner, t.lease_token, t.lease_expires, t.last_error, t.fingerprint, t.streak,
	t.idempotency_key, t.created_at, t.first_started_at, t.finished_at, t.tenant, t.deferrals, t.trace, t.attempt_trace, t.snoozes, t.waits, t.origin`

func scanTask(r pgx.Row) (task.Task, error) { return scanTaskAfter(r) }

// scanTaskAfter scans a row of the columns before, then taskCols.
func scanTaskAfter(r pgx.Row, before ...any) (task.Task, error) {
	var t task.Task
	var runID pgtype.Int8
	var nextAt, leaseExp, created, started, finished pgtype.Timestamptz
	var key pgtype.Text
	var args []byte
	var timeout, grace, prevDelay int64
	err := r.Scan(append(before, &t.ID, &runID, &t.Name, &t.Kind, &args, &t.Queue, &t.Group,
		&t.Priority, &t.State, &t.Policy, &t.PoisonAfter, &timeout, &grace,
		&t.Attempt, &nextAt, &prevDelay, &t.LeaseOwner, &t.LeaseToken, &leaseExp,
		&t.LastError, &t.Fingerprint, &t.Streak, &key, &created, &started, &finished, &t.Tenant, &t.Deferrals,
		&t.Trace, &t.AttemptTrace, &t.Snoozes, &t.Waits, &t.Origin)...)
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
	t.NextAt, t.LeaseExpires = fromTS(nextAt), fromTS(leaseExp)
	t.IdempotencyKey = key.String
	t.CreatedAt, t.FirstStartedAt, t.FinishedAt = fromTS(created), fromTS(started), fromTS(finished)
	return t, nil
}

// scanTasks reads every row of rows and closes them.
func scanTasks(rows pgx.Rows, err error) ([]task.Task, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []task.Task
	var raw *taskRow
	if rawTaskRows(rows.FieldDescriptions()) {
		raw = &taskRow{}
	}
	for rows.Next() {
		var t task.Task
		if raw != nil {
			t, err = raw.read(rows.RawValues())
		} else {
			t, err = scanTask(rows)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// scanClaimed reads the rows of a claim, each its place in claim order
// (from 1) and then taskCols, into that order, and closes rows. Places can
// skip a number: due_tasks can lock a task committed after the claim's
// UPDATE took its snapshot, which the UPDATE then does not see; that task
// stays due, and the claim returns without it.
//
// limit is what the claim asked for. The rows are gathered in a slice that
// grows fourfold, up to limit: a task is 400 bytes, and growing by
// doubling from nothing copied a 1,000-task claim about twice over (a
// tenth of a busy worker's CPU), while a slice of the limit's size would
// waste most of it on the claims that find a few tasks.
func scanClaimed(limit int, rows pgx.Rows, err error) ([]task.Task, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var raw *taskRow
	if fds := rows.FieldDescriptions(); len(fds) > 0 && fds[0].DataTypeOID == pgtype.Int8OID &&
		fds[0].Format == pgx.BinaryFormatCode && rawTaskRows(fds[1:]) {
		raw = &taskRow{}
	}
	var out []task.Task
	var ords []int64
	inOrder := true
	for rows.Next() {
		var t task.Task
		var ord int64
		if raw != nil {
			vs := rows.RawValues()
			if len(vs[0]) != 8 {
				return nil, fmt.Errorf("claim order: %d bytes: %w", len(vs[0]), errRawValue)
			}
			ord = int64(binary.BigEndian.Uint64(vs[0]))
			t, err = raw.read(vs[1:])
		} else {
			t, err = scanTaskAfter(rows, &ord)
		}
		if err != nil {
			return nil, err
		}
		inOrder = inOrder && ord > 0 && (len(ords) == 0 || ord > ords[len(ords)-1])
		if len(out) == cap(out) {
			out = slices.Grow(out, min(max(limit, len(out)+1), max(4*len(out), 16))-len(out))
		}
		out, ords = append(out, t), append(ords, ord)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if inOrder {
		return out, nil
	}
	return placed(out, ords)
}

// errClaimOrder is a claim whose rows do not have places of their own.
var errClaimOrder = errors.New("rows out of claim order")

// placed sorts tasks by their places in ords, which must be positive and
// distinct.
func placed(ts []task.Task, ords []int64) ([]task.Task, error) {
	idx := make([]int, len(ts))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(ords[a], ords[b]) })
	out := make([]task.Task, len(ts))
	for k, i := range idx {
		if ords[i] < 1 || k > 0 && ords[i] == ords[idx[k-1]] {
			return nil, fmt.Errorf("claim: row placed %d: %w", ords[i], errClaimOrder)
		}
		out[k] = ts[i]
	}
	return out, nil
}

const attemptCols = `task_id, number, worker, lease_token, started_at, ended_at,
	outcome, class, error, fingerprint, exit_code, signal, output, delay_ns, decision,
	timeout_ns, timeout_source`

func scanAttempt(r pgx.Row) (task.Attempt, error) {
	var a task.Attempt
	var started, ended pgtype.Timestamptz
	var exit pgtype.Int4
	var delay, timeout int64
	err := r.Scan(&a.TaskID, &a.Number, &a.Worker, &a.LeaseToken, &started, &ended,
		&a.Outcome, &a.Class, &a.Error, &a.Fingerprint, &exit, &a.Signal, &a.Output,
		&delay, &a.Decision, &timeout, &a.TimeoutSource)
	if err != nil {
		return task.Attempt{}, err
	}
	a.StartedAt, a.EndedAt = fromTS(started), fromTS(ended)
	if exit.Valid {
		code := int(exit.Int32)
		a.ExitCode = &code
	}
	a.Delay, a.Timeout = time.Duration(delay), time.Duration(timeout)
	return a, nil
}

const runCols = `id, name, key, max_failures, state, created_at, finished_at`

func scanRun(r pgx.Row) (task.Run, error) {
	var run task.Run
	var key pgtype.Text
	var created, finished pgtype.Timestamptz
	err := r.Scan(&run.ID, &run.Name, &key, &run.MaxFailures, &run.State, &created, &finished)
	if err != nil {
		return task.Run{}, err
	}
	run.Key = key.String
	run.CreatedAt, run.FinishedAt = fromTS(created), fromTS(finished)
	return run, nil
}

const workerCols = `id, host, pid, version, started_at, last_seen, active, last_error, last_error_at, failures, kinds`

func scanWorker(r pgx.Row) (task.Worker, error) {
	var w task.Worker
	var started, seen, errAt pgtype.Timestamptz
	err := r.Scan(&w.ID, &w.Host, &w.PID, &w.Version, &started, &seen, &w.Active, &w.LastError, &errAt, &w.Failures, &w.Kinds)
	if err != nil {
		return task.Worker{}, err
	}
	w.StartedAt, w.LastSeen, w.LastErrorAt = fromTS(started), fromTS(seen), fromTS(errAt)
	return w, nil
}

// scanIDs reads a column of ids and closes rows.
func scanIDs(rows pgx.Rows, err error) ([]int64, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// micros is a duration as whole microseconds, the database's precision.
func micros(d time.Duration) int64 { return d.Microseconds() }
