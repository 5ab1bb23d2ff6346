package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// waitingStates must read exactly as in the partial index tasks_due, for
// the planner to prove that NextDue may use it.
const waitingStates = `state IN ('READY', 'RETRYING', 'SENSING')`

// filter narrows NextDue to a request's queues and kinds (empty: all) and
// run (0: any), and outside its skipped groups, queues and tenants, with
// parameters numbered from next. Each combination is its own statement
// text, so that a prepared plan never carries a test for a filter that is
// not there.
func filter(next int, req store.ClaimRequest) (string, []any) {
	queues, kinds := req.Queues, req.Kinds
	var sql string
	var args []any
	if len(queues) > 0 {
		sql += fmt.Sprintf(` AND queue = ANY($%d::text[])`, next)
		args = append(args, queues)
		next++
	}
	if len(kinds) > 0 {
		sql += fmt.Sprintf(` AND kind = ANY($%d::text[])`, next)
		args = append(args, kinds)
		next++
	}
	if len(req.SkipGroups) > 0 {
		sql += fmt.Sprintf(` AND group_name <> ALL ($%d::text[])`, next)
		args = append(args, req.SkipGroups)
		next++
	}
	if req.Group != "" {
		sql += fmt.Sprintf(` AND group_name = $%d`, next)
		args = append(args, req.Group)
		next++
	}
	if len(req.SkipQueues) > 0 {
		sql += fmt.Sprintf(` AND queue <> ALL ($%d::text[])`, next)
		args = append(args, req.SkipQueues)
		next++
	}
	if len(req.SkipTenants) > 0 {
		sql += fmt.Sprintf(` AND tenant <> ALL ($%d::text[])`, next)
		args = append(args, req.SkipTenants)
		next++
	}
	if req.Tenant != "" {
		sql += fmt.Sprintf(` AND tenant = $%d`, next)
		args = append(args, req.Tenant)
		next++
	}
	if req.Run != 0 {
		sql += fmt.Sprintf(` AND run_id = $%d`, next)
		args = append(args, req.Run)
	}
	return sql, args
}

// claimSQL claims in one statement, claim_tasks (functions/): due_tasks
// locks the first due tasks in claim order, skipping those another claimer
// has locked; they move to RUNNING under a new lease token, and their
// attempts open on the task row (started_at): the attempt's own row is
// written when it ends. claim_tasks is planned once per connection, its
// plan pinned to the claim index and primary key lookups, so that a claim
// of a few tasks is not planned again at every call.
//
// A claim commits without waiting for its WAL to reach the disk
// (synchronous_commit off for its transaction alone): the wait was most of
// the time from a task's enqueue to its start. What a database crash can
// lose is then a claim made in the last moments before it: the task is
// READY again and runs again, as after a worker's crash, and the first
// run's heartbeats and results are rejected, because the new claim's lease
// token is larger than the lost one. For that, tokens come from one
// sequence, unique in the store, that each start of the server, and the
// promotion of a standby, moves past that moment in microseconds
// (migration 0017, functions/lease_tokens_past_start.sql): a token lost
// in a crash or a failover was drawn before it, the next one after. Results,
// rescues and enqueues still wait for the disk.
//
// $1 is the worker, $2 the lease in microseconds, $3 the limit, $4 and $5
// the queues and kinds (NULL: all), $6 the groups to skip (NULL: none), $7
// the only group to take (NULL: any), $8 and $9 the queues and tenants to
// skip (NULL: none), $10 the only tenant to take (NULL: any), $11 how many
// tasks that came due to stamp first, for their fair turn
// (store.StampBatch).
//
// Each row comes with its place in claim order, from 1, unsorted
// (functions/claim_tasks.sql): scanClaimed puts it there.
const claimSQL = `SELECT t.ord, ` + taskColsOf + `
FROM $S.claim_tasks($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) t`

// claimRunSQL is claimSQL for the tasks of one run, $11, through
// claim_run_tasks (functions/claim_run_tasks.sql), which finds them by
// their run.
const claimRunSQL = `SELECT t.ord, ` + taskColsOf + `
FROM $S.claim_run_tasks($1, $2, $3, $11, $4, $5, $6, $7, $8, $9, $10) t`

// Claim takes up to req.Limit (at least 1) due tasks, highest priority
// first, then in fair turns across tenants (functions/fair_lane.sql), and
// returns them in that order; the tasks of one run (req.Run) are taken by
// priority, then earliest due, then oldest.
// A zero req.Lease means store.DefaultLease. Claimers on other connections and
// in other processes skip the rows this one has locked, so no task is
// claimed twice and no claimer waits for another.
func (s *Store) Claim(ctx context.Context, req store.ClaimRequest) ([]task.Task, error) {
	if req.Worker == "" {
		return nil, fmt.Errorf("claim: no worker: %w", task.ErrInvalid)
	}
	req.Limit = max(req.Limit, 1)
	if req.Lease <= 0 {
		req.Lease = store.DefaultLease
	}
	q, args := claimSQL, []any{req.Worker, micros(req.Lease), req.Limit,
		orNull(req.Queues), orNull(req.Kinds), orNull(req.SkipGroups), pgtype.Text{String: req.Group, Valid: req.Group != ""},
		orNull(req.SkipQueues), orNull(req.SkipTenants), pgtype.Text{String: req.Tenant, Valid: req.Tenant != ""}}
	if req.Run != 0 {
		q, args = claimRunSQL, append(args, req.Run)
	} else {
		args = append(args, store.StampBatch)
	}
	var out []task.Task
	err := retrying(ctx, func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, s.sql(q), args...)
		out, err = scanClaimed(req.Limit, rows, err)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim: %w", err)
	}
	return out, nil
}

// NextDue returns the earliest due time of the waiting tasks a Claim with
// req would consider, which may be in the past.
func (s *Store) NextDue(ctx context.Context, req store.ClaimRequest) (time.Time, bool, error) {
	where, args := filter(1, req)
	if !req.DueBefore.IsZero() {
		where += fmt.Sprintf(` AND next_at <= $%d`, len(args)+1)
		args = append(args, req.DueBefore)
	}
	var next pgtype.Timestamptz
	q := `SELECT min(next_at) FROM $S.tasks WHERE ` + waitingStates + where
	if err := s.pool.QueryRow(ctx, s.sql(q), args...).Scan(&next); err != nil {
		return time.Time{}, false, fmt.Errorf("next due: %w", err)
	}
	return fromTS(next), next.Valid, nil
}

// orNull is a list as a parameter: NULL when empty, which due_tasks reads
// as no filter (an empty array would match nothing).
func orNull(vs []string) []string {
	if len(vs) == 0 {
		return nil
	}
	return vs
}
