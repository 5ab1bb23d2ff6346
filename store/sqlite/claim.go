package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// waitingStates must read exactly as in the partial indexes tasks_fair,
// tasks_unstamped, tasks_lane, tasks_due and tasks_run_due, for the
// planner to use them. The queries name their index
// (INDEXED BY): without statistics the planner would rather pick tasks by
// state and sort them all, which costs the whole backlog on every claim.
const waitingStates = `state IN ('READY', 'RETRYING', 'SENSING')`

// notPaused leaves out the tasks of paused queues, kinds and tenants. The
// claimer's gate leaves them out too, from the pauses it read last; read
// here, in the claim's transaction, they are the pauses committed before
// it, so that once Pause returns no claim, in any process, takes their
// tasks.
const notPaused = ` AND queue NOT IN (SELECT name FROM pauses WHERE scope = 'queue')
	AND kind NOT IN (SELECT name FROM pauses WHERE scope = 'kind')
	AND tenant NOT IN (SELECT name FROM pauses WHERE scope = 'tenant')`

// dueWhere selects the waiting tasks due at a time (the first argument) in
// the request's queues and kinds (empty: all) and run (0: any), and outside
// its skipped groups, queues and tenants and the paused ones.
func dueWhere(req store.ClaimRequest) (string, []any) {
	queues, kinds := req.Queues, req.Kinds
	where := waitingStates + ` AND next_at <= ?` + notPaused
	var args []any
	if len(queues) > 0 {
		where += ` AND queue IN (SELECT value FROM json_each(?))`
		args = append(args, jsonList(queues))
	}
	if len(kinds) > 0 {
		where += ` AND kind IN (SELECT value FROM json_each(?))`
		args = append(args, jsonList(kinds))
	}
	if len(req.SkipGroups) > 0 {
		where += ` AND group_name NOT IN (SELECT value FROM json_each(?))`
		args = append(args, jsonList(req.SkipGroups))
	}
	if req.Group != "" {
		where += ` AND group_name = ?`
		args = append(args, req.Group)
	}
	if len(req.SkipQueues) > 0 {
		where += ` AND queue NOT IN (SELECT value FROM json_each(?))`
		args = append(args, jsonList(req.SkipQueues))
	}
	if len(req.SkipTenants) > 0 {
		where += ` AND tenant NOT IN (SELECT value FROM json_each(?))`
		args = append(args, jsonList(req.SkipTenants))
	}
	if req.Tenant != "" {
		where += ` AND tenant = ?`
		args = append(args, req.Tenant)
	}
	if req.Run != 0 {
		where += ` AND run_id = ?`
		args = append(args, req.Run)
	}
	return where, args
}

// Claim takes up to req.Limit (at least 1) due tasks, highest priority
// first, then in fair turns across tenants (fair.go), and returns them in
// that order; the tasks of one run (req.Run) are taken by priority, then
// earliest due, then oldest.
// A zero req.Lease means store.DefaultLease.
func (s *Store) Claim(ctx context.Context, req store.ClaimRequest) ([]task.Task, error) {
	if req.Worker == "" {
		return nil, fmt.Errorf("claim: no worker: %w", task.ErrInvalid)
	}
	req.Limit = max(req.Limit, 1)
	if req.Lease <= 0 {
		req.Lease = store.DefaultLease
	}
	var out []task.Task
	err := s.w.do(ctx, func(x *wtx) error {
		var err error
		out, err = claim(x, req, 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim: %w", err)
	}
	return out, nil
}

// ClaimTask is Claim for the one task id: it takes that task, as Claim
// would (req.Limit aside), when it is due and req's filters and the
// pauses let Claim take it, and no other; otherwise it takes nothing. It
// is not part of the store's contract: a harness that works one chosen
// task at a time (package grittest) claims with it.
func (s *Store) ClaimTask(ctx context.Context, req store.ClaimRequest, id int64) ([]task.Task, error) {
	if req.Worker == "" || id <= 0 {
		return nil, fmt.Errorf("claim task %d: no worker, or no task: %w", id, task.ErrInvalid)
	}
	req.Limit = 1
	if req.Lease <= 0 {
		req.Lease = store.DefaultLease
	}
	var out []task.Task
	err := s.w.do(ctx, func(x *wtx) error {
		var err error
		out, err = claim(x, req, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim task %d: %w", id, err)
	}
	return out, nil
}

// claimSQL gives the task at place key of the list the lease token after
// the counter's last, plus key: see takeTokens. It opens each task's
// attempt on the task row (started_at, beside attempt, lease_token and
// lease_owner), and writes no attempts row: that is written when the
// attempt ends (migration 0017).
const claimSQL = `UPDATE tasks SET state = 'RUNNING', lease_owner = ?,
	lease_token = ? + 1 + ids.key, lease_expires = ?, attempt = attempt + 1,
	started_at = ?4, first_started_at = COALESCE(first_started_at, ?4), next_at = NULL, vt = NULL
FROM json_each(?) AS ids WHERE tasks.id = ids.value
RETURNING ` + taskCols

// claim selects and updates in the same IMMEDIATE transaction, so no other
// writer, in this process or another, can take the same tasks. It stamps
// the tasks that came due first, so that they are claimed in their turn,
// and moves the clocks of the lanes it took from. A claimed task's stamp
// is cleared: it is stamped again if it comes back (fair.go). A task id,
// only, restricts the claim to that task (0: any).
func claim(x *wtx, req store.ClaimRequest, only int64) ([]task.Task, error) {
	if req.Run == 0 {
		if err := stampDue(x); err != nil {
			return nil, err
		}
	}
	due, err := claimable(x, req, only)
	if err != nil || len(due) == 0 {
		return nil, err
	}
	ids := make([]int64, len(due))
	for i, d := range due {
		ids[i] = d.id
	}
	last, err := takeTokens(x, len(ids))
	if err != nil {
		return nil, err
	}
	rows, err := x.query(claimSQL, req.Worker, last, x.now.Add(req.Lease).UnixMicro(), x.now.UnixMicro(), jsonList(ids))
	if err != nil {
		return nil, err
	}
	ts, err := scanTasks(rows)
	if err != nil {
		return nil, err
	}
	ts = inOrder(ts, ids)
	for i := range ts {
		ts[i].NextAt = fromMicros(due[i].due) // when it became due: the claim cleared it on the row
	}
	return ts, advanceClocks(x, due)
}

// takeTokens takes n lease tokens from the store's counter (migration
// 0006) and returns the last one before them: the tokens are last+1 to
// last+n. The writer's transaction holds the database, so no other claim
// or rescue, in this process or another, takes the same ones.
func takeTokens(x *wtx, n int) (last int64, err error) {
	err = x.queryRow(`UPDATE lease_tokens SET last = last + ? RETURNING last`, n).Scan(&last)
	if err != nil {
		return 0, fmt.Errorf("take lease tokens: %w", err)
	}
	return last - int64(n), nil
}

// claimable returns the tasks a claim takes, in claim order: by priority,
// then stamp (tasks_fair), or, for a run's, by priority, then due time
// (tasks_run_due: only the run's tasks due are read).
func claimable(x *wtx, req store.ClaimRequest, only int64) ([]claimTask, error) {
	q, args := dueSQL(req, only)
	args = append([]any{x.now.UnixMicro()}, args...)
	args = append(args, req.Limit)
	rows, err := x.query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []claimTask
	for rows.Next() {
		var d claimTask
		if err := rows.Scan(&d.id, &d.due, &d.vt, &d.queue, &d.priority); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// dueSQL is claimable's query and its arguments after now, before the
// limit: of the task only, when it is not 0.
func dueSQL(req store.ClaimRequest, only int64) (string, []any) {
	where, args := dueWhere(req)
	if only != 0 {
		where += ` AND id = ?`
		args = append(args, only)
	}
	if req.Run != 0 {
		return `SELECT id, next_at, vt, queue, priority FROM tasks INDEXED BY tasks_run_due WHERE ` + where + `
		ORDER BY priority DESC, next_at, id LIMIT ?`, args
	}
	return `SELECT id, next_at, vt, queue, priority FROM tasks INDEXED BY tasks_fair WHERE vt IS NOT NULL AND ` + where + `
		ORDER BY priority DESC, vt, id LIMIT ?`, args
}

func scanIDs(rows *sql.Rows) ([]int64, error) {
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// inOrder puts tasks in the order of ids (RETURNING keeps no order).
func inOrder(ts []task.Task, ids []int64) []task.Task {
	pos := make(map[int64]int, len(ids))
	for i, id := range ids {
		pos[id] = i
	}
	out := make([]task.Task, len(ts))
	for _, t := range ts {
		out[pos[t.ID]] = t
	}
	return out
}

// NextDue returns the earliest due time of the waiting tasks a Claim with
// req would consider, which may be in the past.
func (s *Store) NextDue(ctx context.Context, req store.ClaimRequest) (time.Time, bool, error) {
	where, args := dueWhere(req)
	due := int64(1<<63 - 1) // due at any time
	if !req.DueBefore.IsZero() {
		due = req.DueBefore.UnixMicro()
	}
	args = append([]any{due}, args...)
	var next sql.NullInt64
	err := s.queryRow(ctx, `SELECT next_at FROM tasks INDEXED BY tasks_due WHERE `+where+`
		ORDER BY next_at LIMIT 1`, args...).Scan(&next)
	if err == sql.ErrNoRows {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next due: %w", err)
	}
	return fromMicros(next), true, nil
}
