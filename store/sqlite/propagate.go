package sqlite

import (
	"fmt"

	"github.com/grit-run/grit/task"
)

// Every task keeps needs_left, the count of its needs not yet SUCCESS or
// SKIPPED. Those states never change again, so each need is counted down
// once, and fan-in costs one update per edge instead of a scan of all the
// needs of every dependent.

const satisfySQL = `UPDATE tasks SET
	needs_left = tasks.needs_left - n.c,
	state = CASE WHEN tasks.state = 'PENDING' AND tasks.needs_left - n.c <= 0
		THEN 'READY' ELSE tasks.state END,
	next_at = CASE WHEN tasks.state = 'PENDING' AND tasks.needs_left - n.c <= 0
		THEN coalesce(tasks.next_at, ?) ELSE tasks.next_at END
FROM (SELECT to_task, count(*) AS c FROM edges
	WHERE from_task IN (SELECT value FROM json_each(?)) GROUP BY to_task) AS n
WHERE tasks.id = n.to_task`

// satisfy counts down the needs of the dependents of tasks that became
// SUCCESS or SKIPPED; a PENDING dependent with none left becomes READY
// (due at its RunAt, if later).
func satisfy(x *wtx, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	res, err := x.exec(satisfySQL, x.now.UnixMicro(), jsonList(ids))
	if err != nil {
		return fmt.Errorf("promote dependents: %w", err)
	}
	// Counting down a need may promote no one; waking then costs an idle
	// worker one empty claim, which is cheaper than asking which rows moved.
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		x.due = true
	}
	return nil
}

// blockDownstreamSQL walks down from the given tasks, on through PENDING
// dependents only: a dependent in any other state has already been moved,
// and so have its own dependents. The CROSS JOIN and the unary + keep the
// planner on edges and rowids, instead of scanning every PENDING task.
const blockDownstreamSQL = `WITH RECURSIVE down (id) AS (
	SELECT to_task FROM edges WHERE from_task IN (SELECT value FROM json_each(?))
	UNION
	SELECT e.to_task FROM down d CROSS JOIN edges e ON e.from_task = d.id
	WHERE (SELECT state FROM tasks WHERE id = d.id) = 'PENDING'
)
UPDATE tasks SET state = ?, finished_at = ?, next_at = NULL
WHERE id IN (SELECT id FROM down) AND +state = 'PENDING'`

// blockDownstream moves every task below ids, transitively, to state
// (UPSTREAM_FAILED or CANCELLED): none of them can run any more.
func blockDownstream(x *wtx, ids []int64, state task.State) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := x.exec(blockDownstreamSQL, jsonList(ids), string(state), x.now.UnixMicro()); err != nil {
		return fmt.Errorf("mark dependents %s: %w", state, err)
	}
	return nil
}

// settleRunsOf settles the runs of tasks that ended.
func settleRunsOf(x *wtx, taskIDs []int64) error {
	if len(taskIDs) == 0 {
		return nil
	}
	rows, err := x.query(`SELECT DISTINCT run_id FROM tasks
		WHERE id IN (SELECT value FROM json_each(?)) AND run_id IS NOT NULL`, jsonList(taskIDs))
	if err != nil {
		return err
	}
	runs, err := scanIDs(rows)
	if err != nil {
		return err
	}
	return settleRuns(x, runs)
}

func settleRuns(x *wtx, runs []int64) error {
	for _, id := range runs {
		if err := settleRun(x, id); err != nil {
			return fmt.Errorf("settle run %d: %w", id, err)
		}
	}
	return nil
}

// settleRun fails a RUNNING run whose FAILED tasks passed its MaxFailures,
// or ends it when all its tasks have ended.
func settleRun(x *wtx, id int64) error {
	var state task.State
	var maxFailures int
	err := x.queryRow(`SELECT state, max_failures FROM runs WHERE id = ?`, id).Scan(&state, &maxFailures)
	if err != nil || state != task.Running {
		return err
	}
	if maxFailures > 0 {
		over, err := tooManyFailures(x, id, maxFailures)
		if err != nil || over {
			return err
		}
	}
	end, err := runEnd(x, id)
	if err != nil || end == "" {
		return err
	}
	return endRun(x, id, end)
}

// tooManyFailures fails the run, and cancels its tasks that have not
// started, when its FAILED tasks are more than maxFailures. Those tasks
// are marked as cancelled by the run, which a redrive undoes (redrive.go).
func tooManyFailures(x *wtx, id int64, maxFailures int) (bool, error) {
	var failed int
	err := x.queryRow(`SELECT count(*) FROM tasks WHERE run_id = ? AND state = 'FAILED'`, id).Scan(&failed)
	if err != nil || failed <= maxFailures {
		return false, err
	}
	_, err = x.exec(`UPDATE tasks SET state = 'CANCELLED', cancelled_by_run = 1, finished_at = ?, next_at = NULL
		WHERE run_id = ? AND state IN ('PENDING', 'READY') AND first_started_at IS NULL`,
		x.now.UnixMicro(), id)
	if err != nil {
		return false, err
	}
	return true, endRun(x, id, task.Failed)
}

// runEnd is the state a run ends in, or "" while a task has not ended
// (DEAD_LETTER has not: it waits for an operator).
func runEnd(x *wtx, id int64) (task.State, error) {
	var open, failed, cancelled bool
	err := x.queryRow(`SELECT
		EXISTS (SELECT 1 FROM tasks WHERE run_id = ?1
			AND state IN ('PENDING', 'READY', 'RUNNING', 'RETRYING', 'SENSING', 'DEAD_LETTER')),
		EXISTS (SELECT 1 FROM tasks WHERE run_id = ?1 AND state IN ('FAILED', 'UPSTREAM_FAILED')),
		EXISTS (SELECT 1 FROM tasks WHERE run_id = ?1 AND state = 'CANCELLED')`, id).Scan(&open, &failed, &cancelled)
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

func endRun(x *wtx, id int64, state task.State) error {
	_, err := x.exec(`UPDATE runs SET state = ?, finished_at = ? WHERE id = ? AND state = 'RUNNING'`,
		string(state), x.now.UnixMicro(), id)
	return err
}
