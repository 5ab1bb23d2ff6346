package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// SetResult keeps result as the result of a task RUNNING under token.
func (s *Store) SetResult(ctx context.Context, taskID, token int64, result json.RawMessage) error {
	if err := store.ValidateResult(taskID, result); err != nil {
		return err
	}
	err := s.w.do(ctx, func(x *wtx) error {
		res, err := x.exec(`UPDATE tasks SET result = ? WHERE id = ? AND state = 'RUNNING' AND lease_token = ?`, string(result), taskID, token)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err == nil && n == 0 {
			err = task.ErrLeaseLost
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("set the result of task %d with lease token %d: %w", taskID, token, err)
	}
	return nil
}

// Children reads the tasks of ids that exist, by id, with their results.
func (s *Store) Children(ctx context.Context, ids []int64) ([]task.Child, error) {
	rows, err := s.query(ctx, `SELECT id, state, last_error, result FROM tasks
		WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`, jsonList(ids))
	if err != nil {
		return nil, fmt.Errorf("read tasks %v: %w", ids, err)
	}
	defer rows.Close()
	var out []task.Child
	for rows.Next() {
		var c task.Child
		var res sql.NullString
		if err := rows.Scan(&c.ID, &c.State, &c.Error, &res); err != nil {
			return nil, fmt.Errorf("read tasks %v: %w", ids, err)
		}
		if res.Valid {
			c.Result = json.RawMessage(res.String)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read tasks %v: %w", ids, err)
	}
	return out, nil
}

// awaitTasks records the waits of the items that moved SENSING awaiting
// tasks: a row for each awaited task that has not ended (and none left
// from an earlier wait for others), and their count; a task with none
// is due at once.
func awaitTasks(x *wtx, fs []store.Finish, items []int, moved map[int64]int64) error {
	for _, i := range items {
		f := fs[i]
		if _, ok := moved[f.TaskID]; !ok || len(f.AwaitTasks) == 0 {
			continue
		}
		ids := jsonList(f.AwaitTasks)
		if _, err := x.exec(`DELETE FROM awaits WHERE parent_id = ? AND child_id NOT IN (SELECT value FROM json_each(?))`, f.TaskID, ids); err != nil {
			return fmt.Errorf("await tasks: %w", err)
		}
		if _, err := x.exec(`INSERT OR IGNORE INTO awaits (child_id, parent_id)
			SELECT id, ? FROM tasks WHERE id IN (SELECT value FROM json_each(?)) AND state NOT IN `+store.EndedSQL, f.TaskID, ids); err != nil {
			return fmt.Errorf("await tasks: %w", err)
		}
		var left int
		if err := x.queryRow(`UPDATE tasks SET awaits_left = n.c, next_at = CASE WHEN n.c = 0 THEN ? ELSE next_at END
			FROM (SELECT count(*) AS c FROM awaits WHERE parent_id = ?) AS n
			WHERE id = ? RETURNING awaits_left`, x.now.UnixMicro(), f.TaskID, f.TaskID).Scan(&left); err != nil {
			return fmt.Errorf("await tasks: %w", err)
		}
		x.due = x.due || left == 0
	}
	return nil
}

// endAwaited counts down the tasks that await the tasks ids, which
// ended: each of their rows goes, and a SENSING task that awaits none
// any more is due now. A task that ended twice (a dead letter skipped
// after a replay failed it…) has no rows left the second time.
func endAwaited(x *wtx, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	rows, err := x.query(`DELETE FROM awaits WHERE child_id IN (SELECT value FROM json_each(?)) RETURNING parent_id`, jsonList(ids))
	if err != nil {
		return fmt.Errorf("wake awaiting tasks: %w", err)
	}
	parents, err := scanIDs(rows)
	if err != nil || len(parents) == 0 {
		return err
	}
	res, err := x.exec(`UPDATE tasks SET awaits_left = max(awaits_left - n.c, 0),
			next_at = CASE WHEN awaits_left - n.c <= 0 THEN ? ELSE next_at END
		FROM (SELECT value AS id, count(*) AS c FROM json_each(?) GROUP BY value) AS n
		WHERE tasks.id = n.id AND tasks.state = 'SENSING' AND tasks.awaits_left > 0`, x.now.UnixMicro(), jsonList(parents))
	if err != nil {
		return fmt.Errorf("wake awaiting tasks: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		x.due = true // a count down wakes only its last; one empty claim costs less than asking
	}
	return nil
}

// awaitedBy is the tasks the tasks ids await and that have not ended:
// what cancelling ids cancels with them. Their rows go.
func awaitedBy(x *wtx, ids []int64) ([]int64, error) {
	rows, err := x.query(`DELETE FROM awaits WHERE parent_id IN (SELECT value FROM json_each(?)) RETURNING child_id`, jsonList(ids))
	if err != nil {
		return nil, fmt.Errorf("tasks awaited by %v: %w", ids, err)
	}
	return scanIDs(rows)
}
