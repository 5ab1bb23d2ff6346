package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// propagateFinish moves the dependents of the run tasks that succeeded or
// failed, then settles their runs. It reports whether a dependent became
// READY.
func (s *Store) propagateFinish(ctx context.Context, tx pgx.Tx, fs []store.Finish, ended []int, runOf map[int64]int64) (bool, error) {
	succeeded, failed, runs := store.Ended(fs, ended, runOf)
	promoted, err := s.satisfy(ctx, tx, succeeded)
	if err != nil {
		return false, err
	}
	if err := s.blockDownstream(ctx, tx, failed, task.UpstreamFailed); err != nil {
		return false, err
	}
	return promoted, s.settleRuns(ctx, tx, runs)
}

// Every task keeps needs_left, the count of its needs not yet SUCCESS or
// SKIPPED. Those states never change again, so each need is counted down
// once, and fan-in costs one update per edge instead of a scan of all the
// needs of every dependent. Two transactions counting down the same
// dependent are serialised by its row lock, and the second computes from
// the row the first left (READ COMMITTED re-reads an updated row).

const satisfySQL = `WITH n AS (
	SELECT to_task, count(*) AS c FROM $S.edges WHERE from_task = ANY ($1) GROUP BY to_task
)
UPDATE $S.tasks t SET
	needs_left = t.needs_left - n.c,
	state = CASE WHEN t.state = 'PENDING' AND t.needs_left - n.c <= 0 THEN 'READY' ELSE t.state END,
	next_at = CASE WHEN t.state = 'PENDING' AND t.needs_left - n.c <= 0
		THEN coalesce(t.next_at, now()) ELSE t.next_at END
FROM n
WHERE t.id = n.to_task
RETURNING t.state = 'READY'`

// satisfy counts down the needs of the dependents of tasks that became
// SUCCESS or SKIPPED; a PENDING dependent with none left becomes READY (due
// at its RunAt, if later). It reports whether one did.
func (s *Store) satisfy(ctx context.Context, tx pgx.Tx, ids []int64) (bool, error) {
	if len(ids) == 0 {
		return false, nil
	}
	rows, err := tx.Query(ctx, s.sql(satisfySQL), ids)
	if err != nil {
		return false, fmt.Errorf("promote dependents: %w", err)
	}
	ready, err := pgx.CollectRows(rows, pgx.RowTo[bool])
	if err != nil {
		return false, fmt.Errorf("promote dependents: %w", err)
	}
	return slices.Contains(ready, true), nil
}

// blockDownstreamSQL walks down from the given tasks, on through PENDING
// dependents only: a dependent in any other state has already been moved,
// and so have its own dependents.
const blockDownstreamSQL = `WITH RECURSIVE down (id) AS (
	SELECT to_task FROM $S.edges WHERE from_task = ANY ($1)
	UNION
	SELECT e.to_task FROM down d JOIN $S.edges e ON e.from_task = d.id
	WHERE (SELECT state FROM $S.tasks WHERE id = d.id) = 'PENDING'
)
UPDATE $S.tasks SET state = $2, finished_at = now(), next_at = NULL
WHERE id = ANY (ARRAY(SELECT id FROM down)) AND state = 'PENDING'`

// blockDownstream moves every task below ids, transitively, to state
// (UPSTREAM_FAILED or CANCELLED): none of them can run any more.
func (s *Store) blockDownstream(ctx context.Context, tx pgx.Tx, ids []int64, state task.State) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, s.sql(blockDownstreamSQL), ids, string(state)); err != nil {
		return fmt.Errorf("mark dependents %s: %w", state, err)
	}
	return nil
}

// settleRunsOf settles the runs of tasks that ended.
func (s *Store) settleRunsOf(ctx context.Context, tx pgx.Tx, taskIDs []int64) error {
	runs, err := scanIDs(tx.Query(ctx, s.sql(`SELECT DISTINCT run_id FROM $S.tasks
		WHERE id = ANY($1) AND run_id IS NOT NULL ORDER BY run_id`), taskIDs))
	if err != nil {
		return err
	}
	return s.settleRuns(ctx, tx, runs)
}

// settleRuns settles runs, in id order.
func (s *Store) settleRuns(ctx context.Context, tx pgx.Tx, runs []int64) error {
	for _, id := range runs {
		if err := s.settleRun(ctx, tx, id); err != nil {
			return fmt.Errorf("settle run %d: %w", id, err)
		}
	}
	return nil
}

// settleRun fails a RUNNING run whose FAILED tasks passed its MaxFailures,
// or ends it when all its tasks have ended. It locks the run's row first:
// two transactions that end a run's last two tasks at once would each see
// the other's task still open, and neither would end the run. With the
// lock, the second looks after the first has committed, and (READ
// COMMITTED) its next statements see the first's tasks ended.
func (s *Store) settleRun(ctx context.Context, tx pgx.Tx, id int64) error {
	var state task.State
	var maxFailures int
	err := tx.QueryRow(ctx, s.sql(`SELECT state, max_failures FROM $S.runs WHERE id = $1 FOR NO KEY UPDATE`), id).
		Scan(&state, &maxFailures)
	if err != nil || state != task.Running {
		return err
	}
	if maxFailures > 0 {
		over, err := s.tooManyFailures(ctx, tx, id, maxFailures)
		if err != nil || over {
			return err
		}
	}
	end, err := s.runEnd(ctx, tx, id)
	if err != nil || end == "" {
		return err
	}
	return s.endRun(ctx, tx, id, end)
}

// tooManyFailures fails the run, and cancels its tasks that have not
// started, when its FAILED tasks are more than maxFailures. Those tasks
// are marked as cancelled by the run, which a redrive undoes (redrive.go).
func (s *Store) tooManyFailures(ctx context.Context, tx pgx.Tx, id int64, maxFailures int) (bool, error) {
	var failed int
	err := tx.QueryRow(ctx, s.sql(`SELECT count(*) FROM $S.tasks WHERE run_id = $1 AND state = 'FAILED'`), id).Scan(&failed)
	if err != nil || failed <= maxFailures {
		return false, err
	}
	_, err = tx.Exec(ctx, s.sql(`UPDATE $S.tasks SET state = 'CANCELLED', cancelled_by_run = true, finished_at = now(), next_at = NULL
		WHERE run_id = $1 AND state IN ('PENDING', 'READY') AND first_started_at IS NULL`), id)
	if err != nil {
		return false, err
	}
	return true, s.endRun(ctx, tx, id, task.Failed)
}

// runEnd is the state a run ends in, or "" while a task has not ended
// (DEAD_LETTER has not: it waits for an operator).
func (s *Store) runEnd(ctx context.Context, tx pgx.Tx, id int64) (task.State, error) {
	var open, failed, cancelled bool
	err := tx.QueryRow(ctx, s.sql(`SELECT
		EXISTS (SELECT FROM $S.tasks WHERE run_id = $1
			AND state IN ('PENDING', 'READY', 'RUNNING', 'RETRYING', 'SENSING', 'DEAD_LETTER')),
		EXISTS (SELECT FROM $S.tasks WHERE run_id = $1 AND state IN ('FAILED', 'UPSTREAM_FAILED')),
		EXISTS (SELECT FROM $S.tasks WHERE run_id = $1 AND state = 'CANCELLED')`), id).Scan(&open, &failed, &cancelled)
	switch {
	case err != nil || open:
		return "", err
	case failed:
		return task.Failed, nil
	case cancelled:
		return task.Cancelled, nil
	}
	return task.Success, nil
}

func (s *Store) endRun(ctx context.Context, tx pgx.Tx, id int64, state task.State) error {
	_, err := tx.Exec(ctx, s.sql(`UPDATE $S.runs SET state = $1, finished_at = now() WHERE id = $2 AND state = 'RUNNING'`),
		string(state), id)
	return err
}
