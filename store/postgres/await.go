package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// SetResult keeps result as the result of a task RUNNING under token.
func (s *Store) SetResult(ctx context.Context, taskID, token int64, result json.RawMessage) error {
	if err := store.ValidateResult(taskID, result); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, s.sql(`UPDATE $S.tasks SET result = $3 WHERE id = $1 AND state = 'RUNNING' AND lease_token = $2`), taskID, token, string(result))
	if err == nil && tag.RowsAffected() == 0 {
		err = task.ErrLeaseLost
	}
	if err != nil {
		return fmt.Errorf("set the result of task %d with lease token %d: %w", taskID, token, err)
	}
	return nil
}

// Children reads the tasks of ids that exist, by id, with their results.
func (s *Store) Children(ctx context.Context, ids []int64) ([]task.Child, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT id, state, last_error, result FROM $S.tasks WHERE id = ANY($1) ORDER BY id`), ids)
	if err != nil {
		return nil, fmt.Errorf("read tasks %v: %w", ids, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (task.Child, error) {
		var c task.Child
		var res []byte
		err := r.Scan(&c.ID, &c.State, &c.Error, &res)
		if res != nil {
			c.Result = json.RawMessage(res)
		}
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("read tasks %v: %w", ids, err)
	}
	return out, nil
}

// awaits records the waits of the tasks of round that await others, and
// wakes those that awaited the tasks of round that ended; it says whether
// one became due.
func (s *Store) awaits(ctx context.Context, tx pgx.Tx, fs []store.Finish, round []int, moved map[int64]int64) (bool, error) {
	due, err := s.awaitTasks(ctx, tx, fs, round, moved)
	if err != nil {
		return false, err
	}
	woke, err := s.endAwaited(ctx, tx, store.EndedTasks(fs, round, moved))
	return due || woke, err
}

// awaitTasks records the waits of the items of round that moved SENSING
// awaiting tasks: it marks each awaited task that has not ended (locking
// its row: a Finish that ends it either committed before, and the mark
// skips it, or waits for this transaction, and then finds the row this
// writes), keeps a row for each (and none left from an earlier wait for
// others), and their count; a task with none is due at once. It says
// whether one was.
func (s *Store) awaitTasks(ctx context.Context, tx pgx.Tx, fs []store.Finish, round []int, moved map[int64]int64) (bool, error) {
	due := false
	for _, i := range round {
		f := fs[i]
		if _, ok := moved[f.TaskID]; !ok || len(f.AwaitTasks) == 0 {
			continue
		}
		ids := slices.Sorted(slices.Values(f.AwaitTasks))
		rows, err := tx.Query(ctx, s.sql(`UPDATE $S.tasks SET awaited = true
			WHERE id = ANY($1) AND state NOT IN `+store.EndedSQL+` RETURNING id`), ids)
		if err != nil {
			return false, fmt.Errorf("await tasks: %w", err)
		}
		live, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return false, fmt.Errorf("await tasks: %w", err)
		}
		if _, err := tx.Exec(ctx, s.sql(`DELETE FROM $S.awaits WHERE parent_id = $1 AND child_id <> ALL($2)`), f.TaskID, ids); err != nil {
			return false, fmt.Errorf("await tasks: %w", err)
		}
		if _, err := tx.Exec(ctx, s.sql(`INSERT INTO $S.awaits (child_id, parent_id) SELECT unnest($2::bigint[]), $1
			ON CONFLICT DO NOTHING`), f.TaskID, live); err != nil {
			return false, fmt.Errorf("await tasks: %w", err)
		}
		var left int
		if err := tx.QueryRow(ctx, s.sql(`UPDATE $S.tasks SET awaits_left = n.c, next_at = CASE WHEN n.c = 0 THEN now() ELSE next_at END
			FROM (SELECT count(*) AS c FROM $S.awaits WHERE parent_id = $1) AS n
			WHERE id = $1 RETURNING awaits_left`), f.TaskID).Scan(&left); err != nil {
			return false, fmt.Errorf("await tasks: %w", err)
		}
		due = due || left == 0
	}
	return due, nil
}

// endAwaitedSQL deletes the rows of tasks that ended and counts down the
// tasks that awaited them: a SENSING one that awaits none any more is due
// now. Two ends that count one task down meet on its row, the second
// reading the count the first left.
const endAwaitedSQL = `WITH gone AS (
	DELETE FROM $S.awaits WHERE child_id = ANY($1) RETURNING parent_id
), n AS (
	SELECT parent_id, count(*) AS c FROM gone GROUP BY parent_id
)
UPDATE $S.tasks t SET awaits_left = greatest(t.awaits_left - n.c, 0),
	next_at = CASE WHEN t.awaits_left - n.c <= 0 THEN now() ELSE t.next_at END
FROM n WHERE t.id = n.parent_id AND t.state = 'SENSING' AND t.awaits_left > 0
RETURNING t.awaits_left = 0`

// endAwaited counts down the tasks that await the tasks ids, which ended,
// and says whether one became due. A task that ended twice (a dead letter
// skipped after a replay failed it…) has no rows left the second time.
func (s *Store) endAwaited(ctx context.Context, tx pgx.Tx, ids []int64) (bool, error) {
	if len(ids) == 0 {
		return false, nil
	}
	rows, err := tx.Query(ctx, s.sql(endAwaitedSQL), ids)
	if err != nil {
		return false, fmt.Errorf("wake awaiting tasks: %w", err)
	}
	due, err := pgx.CollectRows(rows, pgx.RowTo[bool])
	if err != nil {
		return false, fmt.Errorf("wake awaiting tasks: %w", err)
	}
	return slices.Contains(due, true), nil
}

// awaitedBy is the tasks task id awaits and that have not ended: what
// cancelling it cancels with it. Their rows go.
func (s *Store) awaitedBy(ctx context.Context, tx pgx.Tx, id int64) ([]int64, error) {
	rows, err := tx.Query(ctx, s.sql(`DELETE FROM $S.awaits WHERE parent_id = $1 RETURNING child_id`), id)
	if err != nil {
		return nil, fmt.Errorf("tasks awaited by %d: %w", id, err)
	}
	kids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("tasks awaited by %d: %w", id, err)
	}
	slices.Sort(kids)
	return kids, nil
}
