package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// deleteTasksSQL deletes, of the ids $1, the tasks in a state of $2
// (store.DeletableStates) and in no run, as pruning deletes its own
// (deletePicked). The lock reads each task as it is now: one replayed
// meanwhile is left alone.
const deleteTasksSQL = `WITH picked AS (
	SELECT t.id FROM $S.tasks t WHERE t.id = ANY ($1::bigint[]) AND t.run_id IS NULL AND t.state = ANY ($2::text[])
	FOR UPDATE OF t
), ` + deletePicked + `
SELECT id FROM tasks_gone ORDER BY id`

// DeleteTasks deletes those of ids that have ended and are in no run.
func (s *Store) DeleteTasks(ctx context.Context, ids []int64) ([]int64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var gone []int64
	err := s.tx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, s.sql(deleteTasksSQL), ids, stateNames(store.DeletableStates()))
		if err != nil {
			return err
		}
		gone, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("delete tasks: %w", err)
	}
	return gone, nil
}

// RunCounts counts the tasks of each run by state, through tasks_run.
func (s *Store) RunCounts(ctx context.Context, ids []int64) (map[int64]map[task.State]int, error) {
	out := map[int64]map[task.State]int{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, s.sql(`SELECT run_id, state, count(*) FROM $S.tasks
		WHERE run_id = ANY ($1::bigint[]) GROUP BY run_id, state`), ids)
	if err != nil {
		return nil, fmt.Errorf("run counts: %w", err)
	}
	var run int64
	var st string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&run, &st, &n}, func() error {
		if out[run] == nil {
			out[run] = map[task.State]int{}
		}
		out[run][task.State(st)] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("run counts: %w", err)
	}
	return out, nil
}
