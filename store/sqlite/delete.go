package sqlite

import (
	"context"
	"fmt"
	"slices"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// deletableSQL picks, of the ids given, the tasks DeleteTasks deletes:
// ended (store.Deletable) and in no run.
const deletableSQL = `SELECT id FROM tasks WHERE id IN (SELECT value FROM json_each(?))
	AND run_id IS NULL AND state IN (SELECT value FROM json_each(?))`

// DeleteTasks deletes, in one request of the writer, those of ids that
// have ended and are in no run, the way pruning deletes its tasks
// (deleteTasks).
func (s *Store) DeleteTasks(ctx context.Context, ids []int64) ([]int64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var gone []int64
	err := s.w.do(ctx, func(x *wtx) error {
		gone = gone[:0]
		rows, err := x.query(deletableSQL, jsonList(ids), jsonList(store.DeletableStates()))
		if err != nil {
			return err
		}
		var due []pruned
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			due, gone = append(due, pruned{id: id}), append(gone, id)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		return deleteTasks(x, due, &store.PruneResult{})
	})
	if err != nil {
		return nil, fmt.Errorf("delete tasks: %w", err)
	}
	slices.Sort(gone)
	return gone, nil
}

// RunCounts counts the tasks of each run by state, through tasks_run.
func (s *Store) RunCounts(ctx context.Context, ids []int64) (map[int64]map[task.State]int, error) {
	out := map[int64]map[task.State]int{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.query(ctx, `SELECT run_id, state, count(*) FROM tasks INDEXED BY tasks_run
		WHERE run_id IN (SELECT value FROM json_each(?)) AND run_id IS NOT NULL GROUP BY run_id, state`, jsonList(ids))
	if err != nil {
		return nil, fmt.Errorf("run counts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var run int64
		var st task.State
		var n int
		if err := rows.Scan(&run, &st, &n); err != nil {
			return nil, fmt.Errorf("run counts: %w", err)
		}
		if out[run] == nil {
			out[run] = map[task.State]int{}
		}
		out[run][st] = n
	}
	return out, rows.Err()
}
