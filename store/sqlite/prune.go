package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// endedRun lists the states of a run that has ended.
const endedRun = `('SUCCESS', 'FAILED', 'UPSTREAM_FAILED', 'SKIPPED', 'CANCELLED')`

// inEndedRun is the condition that a task t is in no run or in one that
// has ended: the tasks of a run that goes on are kept, since its
// dependents and its end still read them.
const inEndedRun = `(t.run_id IS NULL OR EXISTS (SELECT 1 FROM runs r WHERE r.id = t.run_id AND r.state IN ` + endedRun + `))`

// Each state is walked oldest first, from the shortest keep of its rules,
// through an index that holds it alone, so that a round reads what it
// deletes and not every task: SUCCESS through tasks_success, kind and name
// at a time; the other states through tasks_finished, whose WHERE clause
// the query repeats for SQLite to use it.
const (
	dueSuccessSQL = `SELECT t.id, t.queue, t.finished_at, coalesce(t.run_id, 0) FROM tasks t INDEXED BY tasks_success
		WHERE t.state = 'SUCCESS' AND t.kind = ? AND t.name = ? AND t.finished_at < ? AND ` + inEndedRun + `
		ORDER BY t.finished_at`
	dueOtherSQL = `SELECT t.id, t.queue, t.finished_at, coalesce(t.run_id, 0) FROM tasks t INDEXED BY tasks_finished
		WHERE t.state IN ('FAILED', 'UPSTREAM_FAILED', 'SKIPPED', 'CANCELLED')
			AND t.state = ? AND t.finished_at < ? AND ` + inEndedRun + `
		ORDER BY t.finished_at`
)

// pruned is a task a round deletes.
type pruned struct {
	id, run  int64 // run 0: in none
	finished int64 // microseconds
}

// Prune deletes, in one request of the writer, one round's due tasks with
// their attempts and edges, then the ended runs those tasks leave empty,
// and, with req.Workers, the workers' rows it lets go.
func (s *Store) Prune(ctx context.Context, req store.PruneRequest) (store.PruneResult, error) {
	if err := store.ValidatePrune(req); err != nil {
		return store.PruneResult{}, err
	}
	var res store.PruneResult
	err := s.w.do(ctx, func(x *wtx) error {
		res = store.PruneResult{}
		due, err := dueTasks(x, req)
		if err != nil {
			return err
		}
		if err := deleteTasks(x, due, &res); err != nil {
			return err
		}
		if req.Workers > 0 {
			res.Workers, err = deleteWorkers(x, req)
		}
		return err
	})
	if err != nil {
		return store.PruneResult{}, fmt.Errorf("prune: %w", err)
	}
	return res, nil
}

// dueTasks returns the round's tasks: at most req.Limit of those due,
// oldest finished first.
func dueTasks(x *wtx, req store.PruneRequest) ([]pruned, error) {
	var due []pruned
	for _, st := range []task.State{task.Success, task.Failed, task.UpstreamFailed, task.Skipped, task.Cancelled} {
		shortest, ok := store.PruneShortest(req.Rules, st)
		if !ok {
			continue
		}
		bound := x.now.Add(-shortest).UnixMicro()
		if st != task.Success {
			got, err := walkDue(x, req, st, dueOtherSQL, string(st), bound)
			if err != nil {
				return nil, err
			}
			due = append(due, got...)
			continue
		}
		names, err := successNames(x)
		if err != nil {
			return nil, err
		}
		for _, kn := range names {
			got, err := walkDue(x, req, st, dueSuccessSQL, kn[0], kn[1], bound)
			if err != nil {
				return nil, err
			}
			due = append(due, got...)
		}
	}
	slices.SortFunc(due, func(a, b pruned) int { return cmp.Or(cmp.Compare(a.finished, b.finished), cmp.Compare(a.id, b.id)) })
	return due[:min(len(due), req.Limit)], nil
}

// walkDue reads a walk's rows oldest first, and keeps those that their
// queue's rule lets go (store.PruneKeep), up to the round's limit.
func walkDue(x *wtx, req store.PruneRequest, st task.State, query string, args ...any) ([]pruned, error) {
	rows, err := x.query(query, args...)
	if err != nil {
		return nil, fmt.Errorf("due %s tasks: %w", st, err)
	}
	defer rows.Close()
	var out []pruned
	for len(out) < req.Limit && rows.Next() {
		var p pruned
		var queue string
		if err := rows.Scan(&p.id, &queue, &p.finished, &p.run); err != nil {
			return nil, fmt.Errorf("due %s tasks: %w", st, err)
		}
		if keep, ok := store.PruneKeep(req.Rules, queue, st); ok && p.finished < x.now.Add(-keep).UnixMicro() {
			out = append(out, p)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("due %s tasks: %w", st, err)
	}
	return out, nil
}

// successNames lists the kinds and names of SUCCESS tasks.
func successNames(x *wtx) ([][2]string, error) {
	rows, err := x.query(successNamesSQL + ` SELECT kind, name FROM k WHERE name IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("kinds of successes: %w", err)
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var kn [2]string
		if err := rows.Scan(&kn[0], &kn[1]); err != nil {
			return nil, fmt.Errorf("kinds of successes: %w", err)
		}
		out = append(out, kn)
	}
	return out, rows.Err()
}

// deleteTasks deletes the tasks with their attempts, steps, messages, awaits and edges (the
// foreign keys want those first), then the ended runs they leave empty,
// raising run_ids past them so that their ids are not handed out again.
func deleteTasks(x *wtx, due []pruned, res *store.PruneResult) error {
	if len(due) == 0 {
		return nil
	}
	ids, runs := make([]int64, len(due)), []int64{}
	for i, p := range due {
		ids[i] = p.id
		if p.run != 0 {
			runs = append(runs, p.run)
		}
	}
	list := jsonList(ids)
	n, err := count(x.exec(`DELETE FROM attempts WHERE task_id IN (SELECT value FROM json_each(?))`, list))
	if err != nil {
		return fmt.Errorf("delete attempts: %w", err)
	}
	res.Attempts = n
	if _, err := x.exec(`DELETE FROM steps WHERE task_id IN (SELECT value FROM json_each(?))`, list); err != nil {
		return fmt.Errorf("delete steps: %w", err)
	}
	if _, err := x.exec(`DELETE FROM messages WHERE task_id IN (SELECT value FROM json_each(?))`, list); err != nil {
		return fmt.Errorf("delete messages: %w", err)
	}
	if _, err := x.exec(`DELETE FROM awaits WHERE parent_id IN (SELECT value FROM json_each(?))`, list); err != nil {
		return fmt.Errorf("delete awaits: %w", err)
	}
	if _, err := x.exec(`DELETE FROM edges WHERE from_task IN (SELECT value FROM json_each(?1))
		OR to_task IN (SELECT value FROM json_each(?1))`, list); err != nil {
		return fmt.Errorf("delete edges: %w", err)
	}
	if res.Tasks, err = count(x.exec(`DELETE FROM tasks WHERE id IN (SELECT value FROM json_each(?))`, list)); err != nil {
		return fmt.Errorf("delete tasks: %w", err)
	}
	if len(runs) == 0 {
		return nil
	}
	gone, err := x.query(`DELETE FROM runs WHERE id IN (SELECT value FROM json_each(?)) AND state IN `+endedRun+`
		AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.run_id = runs.id) RETURNING id`, jsonList(runs))
	if err != nil {
		return fmt.Errorf("delete runs: %w", err)
	}
	var last int64
	for gone.Next() {
		var id int64
		if err := gone.Scan(&id); err != nil {
			gone.Close()
			return fmt.Errorf("delete runs: %w", err)
		}
		res.Runs, last = res.Runs+1, max(last, id)
	}
	if err := gone.Close(); err != nil {
		return fmt.Errorf("delete runs: %w", err)
	}
	if _, err := x.exec(`UPDATE run_ids SET last = max(last, ?)`, last); err != nil {
		return fmt.Errorf("raise run ids: %w", err)
	}
	return nil
}

// count is the number of rows a statement changed.
func count(res sql.Result, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// deleteWorkers deletes the rows of workers not seen for req.Workers (an
// inactive worker is seen no more) that hold no RUNNING task. A worker
// that is alive sees to its row at its next heartbeat.
func deleteWorkers(x *wtx, req store.PruneRequest) (int, error) {
	n, err := count(x.exec(`DELETE FROM workers WHERE last_seen < ?
		AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.state = 'RUNNING' AND t.lease_owner = workers.id)`,
		x.now.Add(-req.Workers).UnixMicro()))
	if err != nil {
		return 0, fmt.Errorf("delete workers: %w", err)
	}
	return n, nil
}

// RunPruned tells whether id was handed out to a run that is no longer
// there: the largest id handed out is that of the newest run, or one
// pruning deleted (run_ids), and only pruning deletes a run.
func (s *Store) RunPruned(ctx context.Context, id int64) (bool, error) {
	var pruned bool
	err := s.queryRow(ctx, `SELECT ?1 > 0 AND ?1 <= max(last, (SELECT coalesce(max(id), 0) FROM runs))
		AND NOT EXISTS (SELECT 1 FROM runs WHERE id = ?1) FROM run_ids`, id).Scan(&pruned)
	if err != nil {
		return false, fmt.Errorf("run %d pruned: %w", id, err)
	}
	return pruned, nil
}
