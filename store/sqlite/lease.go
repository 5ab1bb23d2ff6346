package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

const renewSQL = `UPDATE tasks SET lease_expires = ?
FROM (SELECT value ->> 0 AS id, value ->> 1 AS token FROM json_each(?)) AS h
WHERE tasks.id = h.id AND tasks.lease_token = h.token
	AND +tasks.state = 'RUNNING' AND +tasks.lease_owner = ?
RETURNING tasks.id, tasks.lease_token`

const seenSQL = `INSERT INTO workers (id, started_at, last_seen, active) VALUES (?1, ?2, ?2, 1)
ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen, active = 1`

// Heartbeat renews, in one statement, the leases in held that the worker
// still holds, records the worker as seen (registering it if it was not),
// and returns the held leases it no longer holds. A lease the worker holds
// but did not name is not renewed: nothing is working on it, so it should
// expire and be rescued. A zero lease means store.DefaultLease.
func (s *Store) Heartbeat(ctx context.Context, worker string, lease time.Duration, held []store.Lease) ([]store.Lease, error) {
	if worker == "" {
		return nil, fmt.Errorf("heartbeat: no worker: %w", task.ErrInvalid)
	}
	if lease <= 0 {
		lease = store.DefaultLease
	}
	pairs := make([][2]int64, len(held))
	for i, l := range held {
		pairs[i] = [2]int64{l.TaskID, l.Token}
	}
	var renewed map[store.Lease]bool
	err := s.w.do(ctx, func(x *wtx) error {
		if _, err := x.exec(seenSQL, worker, x.now.UnixMicro()); err != nil {
			return err
		}
		if len(held) == 0 {
			return nil
		}
		rows, err := x.query(renewSQL, x.now.Add(lease).UnixMicro(), jsonList(pairs), worker)
		if err != nil {
			return err
		}
		renewed, err = scanLeases(rows)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("heartbeat of %s: %w", worker, err)
	}
	return lostLeases(held, renewed), nil
}

func scanLeases(rows *sql.Rows) (map[store.Lease]bool, error) {
	defer rows.Close()
	m := make(map[store.Lease]bool)
	for rows.Next() {
		var l store.Lease
		if err := rows.Scan(&l.TaskID, &l.Token); err != nil {
			return nil, err
		}
		m[l] = true
	}
	return m, rows.Err()
}

func lostLeases(held []store.Lease, renewed map[store.Lease]bool) []store.Lease {
	var lost []store.Lease
	for _, l := range held {
		if !renewed[l] {
			lost = append(lost, l)
		}
	}
	return lost
}

// Rescue takes over RUNNING tasks whose lease expired (or, with req.Owner,
// every RUNNING task of that worker), oldest expiry first, up to req.Limit
// (0: all). Each gets a new lease token held by req.Worker for req.Lease
// (0: store.DefaultLease) and its open attempt is closed as INTERRUPTED; its
// attempt count is unchanged. Workers not seen for req.Lease, and Owner,
// are marked inactive.
func (s *Store) Rescue(ctx context.Context, req store.RescueRequest) ([]task.Task, error) {
	if req.Worker == "" {
		return nil, fmt.Errorf("rescue: no worker: %w", task.ErrInvalid)
	}
	if req.Lease <= 0 {
		req.Lease = store.DefaultLease
	}
	if req.Limit <= 0 {
		req.Limit = -1 // SQLite: no limit
	}
	var out []task.Task
	err := s.w.do(ctx, func(x *wtx) error {
		var err error
		out, err = rescue(x, req)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("rescue: %w", err)
	}
	return out, nil
}

// interruptSQL writes the open attempts of the tasks a rescue takes over
// (the first parameter is now, the second their ids) as INTERRUPTED, from
// their task rows; the rescue then closes them there (started_at NULL).
// A task already taken over by an earlier rescue has none.
const interruptSQL = `INSERT INTO attempts (task_id, lease_token, number, worker, started_at, ended_at, outcome)
SELECT id, lease_token, attempt, lease_owner, started_at, ?, 'INTERRUPTED' FROM tasks
WHERE id IN (SELECT value FROM json_each(?)) AND started_at IS NOT NULL`

func rescue(x *wtx, req store.RescueRequest) ([]task.Task, error) {
	ids, err := rescuable(x, req)
	if err != nil {
		return nil, err
	}
	if err := markSilent(x, req); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	now, list := x.now.UnixMicro(), jsonList(ids)
	if _, err := x.exec(interruptSQL, now, list); err != nil {
		return nil, fmt.Errorf("write interrupted attempts: %w", err)
	}
	last, err := takeTokens(x, len(ids))
	if err != nil {
		return nil, err
	}
	rows, err := x.query(`UPDATE tasks SET lease_owner = ?, lease_token = ? + 1 + ids.key, lease_expires = ?, started_at = NULL
		FROM json_each(?) AS ids WHERE tasks.id = ids.value RETURNING `+taskCols,
		req.Worker, last, x.now.Add(req.Lease).UnixMicro(), list)
	if err != nil {
		return nil, err
	}
	ts, err := scanTasks(rows)
	if err != nil {
		return nil, err
	}
	return inOrder(ts, ids), nil
}

func rescuable(x *wtx, req store.RescueRequest) ([]int64, error) {
	q := `SELECT id FROM tasks INDEXED BY tasks_lease_expires
		WHERE state = 'RUNNING' AND lease_expires <= ? ORDER BY lease_expires, id LIMIT ?`
	arg := any(x.now.UnixMicro())
	if req.Owner != "" {
		q = `SELECT id FROM tasks INDEXED BY tasks_lease_expires
			WHERE state = 'RUNNING' AND lease_owner = ? ORDER BY lease_expires, id LIMIT ?`
		arg = req.Owner
	}
	rows, err := x.query(q, arg, req.Limit)
	if err != nil {
		return nil, err
	}
	return scanIDs(rows)
}

// markSilent marks inactive the workers not seen for a lease, and the
// owner the rescuer was told is dead.
func markSilent(x *wtx, req store.RescueRequest) error {
	_, err := x.exec(`UPDATE workers SET active = 0
		WHERE active = 1 AND (last_seen <= ? OR id = ?)`,
		x.now.Add(-req.Lease).UnixMicro(), req.Owner)
	if err != nil {
		return fmt.Errorf("mark silent workers: %w", err)
	}
	return nil
}
