package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/retention"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// pruneTasksSQL deletes one round's tasks and their attempts (and steps, messages and awaits), and returns
// how many went and the runs they were in. $1 is the round's limit; $2-$4
// the rules, one per queue and state ("" for every other queue), keeps in
// microseconds.
//
// A task is due when it finished longer ago than its queue's keep for its
// state, else the keep without a queue (store.PruneKeep, whose rule the
// two coalesced lookups repeat), and is in no run or in one that has
// ended. Each state is walked oldest first from the shortest keep of its
// rules, through an index that holds it alone: SUCCESS through
// tasks_success, kind and name at a time (a loose index scan, as
// seriesSQL walks it), the other states through tasks_finished; the
// oldest of all the walks are the round's. Only those are locked, the
// others skipped if another round holds them, so two rounds take
// disjoint tasks and neither waits; the lock checks the task again, as
// it is now, in case it was replayed since the walk read it. A claim
// never locks a finished task, so a round neither waits for a claim nor
// holds one back. Two rounds at once may walk to the same oldest tasks,
// and the later then deletes fewer; locking in the walks would spare it
// that, at the cost of a tuple lock written for every task each walk
// reads, most of which the round does not delete.
const pruneTasksSQL = `WITH RECURSIVE rules AS (
	SELECT * FROM unnest($2::text[], $3::text[], $4::bigint[]) AS r (queue, state, us)
), k AS (
	(SELECT kind, name FROM $S.tasks WHERE state = 'SUCCESS' AND EXISTS (SELECT FROM rules WHERE state = 'SUCCESS')
		ORDER BY kind, name LIMIT 1)
	UNION ALL
	SELECT n.kind, n.name FROM k CROSS JOIN LATERAL (
		SELECT t.kind, t.name FROM $S.tasks t WHERE t.state = 'SUCCESS' AND (t.kind, t.name) > (k.kind, k.name)
		ORDER BY t.kind, t.name LIMIT 1) n
), shortest AS (
	SELECT state, min(us) AS us FROM rules GROUP BY state
), due AS (
	SELECT c.id, c.finished_at FROM k CROSS JOIN LATERAL (
		SELECT t.id, t.finished_at FROM $S.tasks t
		WHERE t.state = 'SUCCESS' AND t.kind = k.kind AND t.name = k.name
			AND t.finished_at < now() - (SELECT us FROM shortest WHERE state = 'SUCCESS') * interval '1 microsecond'
			AND ` + prunable + `
		ORDER BY t.finished_at LIMIT $1) c
	UNION ALL
	SELECT c.id, c.finished_at FROM shortest s CROSS JOIN LATERAL (
		SELECT t.id, t.finished_at FROM $S.tasks t
		WHERE t.state = s.state AND t.state IN ('FAILED', 'UPSTREAM_FAILED', 'SKIPPED', 'CANCELLED')
			AND t.finished_at < now() - s.us * interval '1 microsecond' AND ` + prunable + `
		ORDER BY t.finished_at LIMIT $1) c
	WHERE s.state <> 'SUCCESS'
), picked AS (
	SELECT t.id FROM $S.tasks t
	WHERE t.id = ANY (ARRAY(SELECT id FROM due ORDER BY finished_at LIMIT $1))
		AND t.state IN ('SUCCESS', 'FAILED', 'UPSTREAM_FAILED', 'SKIPPED', 'CANCELLED') AND ` + prunable + `
	FOR UPDATE OF t SKIP LOCKED
), ` + deletePicked + `
SELECT (SELECT count(*) FROM tasks_gone), (SELECT count(*) FROM attempts_gone),
	coalesce((SELECT array_agg(DISTINCT run_id ORDER BY run_id) FROM tasks_gone WHERE run_id IS NOT NULL), '{}')`

// deletePicked is the end of a WITH clause that deletes the tasks of
// the CTE picked (its column id) with their attempts, steps and
// messages: pruning's and DeleteTasks'. Its CTE tasks_gone returns each
// deleted task's id and run_id, attempts_gone the task_id of each
// attempt deleted. (Edges go with their tasks: ON DELETE CASCADE.)
const deletePicked = `attempts_gone AS (
	DELETE FROM $S.attempts a WHERE a.task_id = ANY (ARRAY(SELECT id FROM picked)) RETURNING a.task_id
), steps_gone AS (
	DELETE FROM $S.steps s WHERE s.task_id = ANY (ARRAY(SELECT id FROM picked))
), messages_gone AS (
	DELETE FROM $S.messages m WHERE m.task_id = ANY (ARRAY(SELECT id FROM picked))
), awaits_gone AS (
	DELETE FROM $S.awaits w WHERE w.parent_id = ANY (ARRAY(SELECT id FROM picked))
), tasks_gone AS (
	DELETE FROM $S.tasks t WHERE t.id = ANY (ARRAY(SELECT id FROM picked)) RETURNING t.id, t.run_id
)`

// prunable is the rest of a due task's condition, on a task t. Its run's
// state is looked up by key, task by task: written as EXISTS, the planner
// hashed every ended run to answer it. The round deletes by arrays of ids
// for the same reason: a join with its few ids was hashed against a scan
// of attempts.
const prunable = `t.finished_at < now() - coalesce(
		(SELECT r.us FROM rules r WHERE r.state = t.state AND r.queue = t.queue),
		(SELECT r.us FROM rules r WHERE r.state = t.state AND r.queue = '')) * interval '1 microsecond'
	AND (t.run_id IS NULL OR (SELECT r.state FROM $S.runs r WHERE r.id = t.run_id) IN ` + endedRun + `)`

// endedRun lists the states of a run that has ended.
const endedRun = `('SUCCESS', 'FAILED', 'UPSTREAM_FAILED', 'SKIPPED', 'CANCELLED')`

// Prune deletes one round's due tasks with their attempts, then the
// ended runs those tasks leave empty, in one transaction; then, with
// req.Workers, the workers' rows it lets go.
func (s *Store) Prune(ctx context.Context, req store.PruneRequest) (store.PruneResult, error) {
	if err := store.ValidatePrune(req); err != nil {
		return store.PruneResult{}, err
	}
	queues, states, keeps := pruneRules(req.Rules)
	var res store.PruneResult
	err := s.tx(ctx, func(tx pgx.Tx) error {
		res = store.PruneResult{}
		var runs []int64
		err := tx.QueryRow(ctx, s.sql(pruneTasksSQL), req.Limit, queues, states, keeps).
			Scan(&res.Tasks, &res.Attempts, &runs)
		if err != nil || len(runs) == 0 {
			return err
		}
		res.Runs, err = s.pruneRuns(ctx, tx, runs)
		return err
	})
	if err != nil {
		return store.PruneResult{}, fmt.Errorf("prune: %w", err)
	}
	if req.Workers > 0 {
		if res.Workers, err = s.pruneWorkers(ctx, req); err != nil {
			return res, fmt.Errorf("prune: %w", err)
		}
	}
	return res, nil
}

// pruneRules turns rules into the columns pruneTasksSQL reads: one rule
// per queue and state, the longer keep of two the same (store.PruneKeep),
// in whole microseconds.
func pruneRules(rules []retention.Rule) (queues, states []string, keeps []int64) {
	type key struct {
		queue string
		state task.State
	}
	m := make(map[key]int64, len(rules))
	for _, r := range rules {
		k := key{r.Queue, r.State}
		m[k] = max(m[k], r.Keep.Microseconds(), 1)
	}
	for k, us := range m {
		queues, states, keeps = append(queues, k.queue), append(states, string(k.state)), append(keeps, us)
	}
	return queues, states, keeps
}

// pruneRuns deletes the ended runs, of those given, that have no task
// left, with their edges, and counts them. Two rounds may each delete
// some of a run's last tasks, neither seeing the other's deletes before
// it commits: so each locks the runs first, in id order, and looks for
// tasks only once it holds them, in a statement of its own, which sees
// what a round that held a run before it committed.
func (s *Store) pruneRuns(ctx context.Context, tx pgx.Tx, runs []int64) (int, error) {
	if _, err := tx.Exec(ctx, s.sql(`SELECT FROM $S.runs WHERE id = ANY ($1) ORDER BY id FOR UPDATE`), runs); err != nil {
		return 0, err
	}
	tag, err := tx.Exec(ctx, s.sql(`DELETE FROM $S.runs r WHERE r.id = ANY ($1) AND r.state IN `+endedRun+`
		AND NOT EXISTS (SELECT FROM $S.tasks t WHERE t.run_id = r.id)`), runs)
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}

// pruneWorkers deletes the rows of workers not seen for req.Workers
// (an inactive worker is seen no more) that hold no RUNNING task. A
// worker that is alive sees to its row at its next heartbeat.
func (s *Store) pruneWorkers(ctx context.Context, req store.PruneRequest) (int, error) {
	var n int64
	err := retrying(ctx, func(ctx context.Context) error {
		tag, err := s.pool.Exec(ctx, s.sql(`DELETE FROM $S.workers w
			WHERE w.last_seen < now() - $1::bigint * interval '1 microsecond'
				AND NOT EXISTS (SELECT FROM $S.tasks t WHERE t.state = 'RUNNING' AND t.lease_owner = w.id)`),
			req.Workers.Microseconds())
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("workers: %w", err)
	}
	return int(n), nil
}

// RunPruned tells whether id was handed out to a run that is no longer
// there: ids come from the runs' sequence alone, and only pruning deletes
// a run. An id a failed insert drew and never used counts as pruned too.
func (s *Store) RunPruned(ctx context.Context, id int64) (bool, error) {
	var pruned bool
	err := s.pool.QueryRow(ctx, s.sql(`SELECT $1::bigint > 0
		AND $1::bigint <= coalesce(pg_sequence_last_value('$S.runs_id_seq'), 0)
		AND NOT EXISTS (SELECT FROM $S.runs WHERE id = $1)`), id).Scan(&pruned)
	if err != nil {
		return false, fmt.Errorf("run %d pruned: %w", id, err)
	}
	return pruned, nil
}
