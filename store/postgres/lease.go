package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// heartbeatSQL records the worker as seen (registering it if it was not)
// and renews the held leases, in one statement. The lease check is one
// CASE for the reason given at finishTasksSQL. $1 is the worker, $2 the
// lease in microseconds, $3 and $4 the held tasks and tokens.
const heartbeatSQL = `WITH seen AS (
	INSERT INTO $S.workers (id, started_at, last_seen, active) VALUES ($1, now(), now(), true)
	ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen, active = true
), renewed AS (
	UPDATE $S.tasks t SET lease_expires = now() + $2::bigint * interval '1 microsecond'
	FROM unnest($3::bigint[], $4::bigint[]) AS h (id, token)
	WHERE t.id = h.id AND CASE t.state WHEN 'RUNNING' THEN t.lease_token = h.token AND t.lease_owner = $1 END
	RETURNING t.id, t.lease_token
)
SELECT id, lease_token FROM renewed`

// DefaultHeartbeatConns is the size of the pool that heartbeats have to
// themselves, apart from the store's, unless Config.HeartbeatConns or the
// DSN's heartbeat_conns parameter says otherwise.
const DefaultHeartbeatConns = 2

// beatPool is the heartbeats' own pool, on the store's connection
// settings. A heartbeat that waited for a connection of the store's
// pool queued behind a thousand claims, results and per-task statements
// on a busy worker, until its deadline passed and the worker gave up
// leases the database would have renewed in a fraction of a second. It
// connects on the first heartbeat.
func beatPool(ctx context.Context, pc *pgxpool.Config, conns int) (*pgxpool.Pool, error) {
	bc := pc.Copy()
	bc.MaxConns, bc.MinConns = int32(conns), 0
	p, err := pgxpool.NewWithConfig(ctx, bc)
	if err != nil {
		return nil, fmt.Errorf("postgres: the heartbeats' pool: %w", err)
	}
	return p, nil
}

// Heartbeat renews, in one statement, the leases in held that the worker
// still holds, records the worker as seen (registering it if it was not),
// and returns the held leases it no longer holds. A lease the worker holds
// but did not name is not renewed: nothing is working on it, so it should
// expire and be rescued. A zero lease means store.DefaultLease. It runs
// on the heartbeats' own connections (beatPool).
func (s *Store) Heartbeat(ctx context.Context, worker string, lease time.Duration, held []store.Lease) ([]store.Lease, error) {
	if worker == "" {
		return nil, fmt.Errorf("heartbeat: no worker: %w", task.ErrInvalid)
	}
	if lease <= 0 {
		lease = store.DefaultLease
	}
	sorted := slices.Clone(held) // one lock order for every statement
	slices.SortFunc(sorted, func(a, b store.Lease) int { return cmp.Compare(a.TaskID, b.TaskID) })
	ids, tokens := make([]int64, len(sorted)), make([]int64, len(sorted))
	for i, l := range sorted {
		ids[i], tokens[i] = l.TaskID, l.Token
	}
	renewed := map[store.Lease]bool{}
	err := retrying(ctx, func(ctx context.Context) error {
		rows, err := s.beats.Query(ctx, s.sql(heartbeatSQL), worker, micros(lease), ids, tokens)
		if err != nil {
			return err
		}
		ls, err := pgx.CollectRows(rows, pgx.RowToStructByPos[store.Lease])
		clear(renewed)
		for _, l := range ls {
			renewed[l] = true
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("heartbeat of %s: %w", worker, err)
	}
	var lost []store.Lease
	for _, l := range held {
		if !renewed[l] {
			lost = append(lost, l)
		}
	}
	return lost, nil
}

// rescueSQL takes over, in one statement, the RUNNING tasks whose lease
// expired (or, with an owner, every RUNNING task of that owner), oldest
// expiry first, skipping those another rescuer, heartbeat or finish has
// locked; writes their open attempts as INTERRUPTED (and marks them
// closed: started_at NULL); and marks inactive the
// workers not seen for a lease, and the owner. $1 is the rescuer, $2 the
// lease in microseconds, $3 the limit (NULL: all), $4 the owner ("": none).
func rescueSQL(byOwner bool) string {
	which := `lease_expires <= now()`
	if byOwner {
		which = `lease_owner = $4`
	}
	return `WITH r AS (
	SELECT id, lease_expires, lease_token, attempt, lease_owner, started_at FROM $S.tasks
	WHERE state = 'RUNNING' AND ` + which + `
	ORDER BY lease_expires, id
	LIMIT $3
	FOR UPDATE SKIP LOCKED
), closed AS (
	INSERT INTO $S.attempts (task_id, lease_token, number, worker, started_at, ended_at, outcome)
	SELECT id, lease_token, attempt, lease_owner, started_at, now(), 'INTERRUPTED' FROM r
	WHERE started_at IS NOT NULL
), silent AS (
	UPDATE $S.workers SET active = false
	WHERE active AND (last_seen <= now() - $2::bigint * interval '1 microsecond' OR id = $4)
), t AS (
	UPDATE $S.tasks t SET lease_owner = $1, lease_token = $S.new_lease_token(),
		lease_expires = now() + $2::bigint * interval '1 microsecond', started_at = NULL
	WHERE t.id = ANY (ARRAY(SELECT id FROM r))
	RETURNING t.*
)
SELECT ` + taskColsOf + ` FROM t JOIN r ON r.id = t.id ORDER BY r.lease_expires, r.id`
}

// Rescue takes over RUNNING tasks whose lease expired (or, with req.Owner,
// every RUNNING task of that worker), oldest expiry first, up to req.Limit
// (0: all). Each gets a new lease token held by req.Worker for req.Lease
// (0: store.DefaultLease) and its open attempt is closed as INTERRUPTED; its
// attempt count is unchanged. Workers not seen for req.Lease, and Owner,
// are marked inactive. Rescuers running at once take disjoint tasks.
func (s *Store) Rescue(ctx context.Context, req store.RescueRequest) ([]task.Task, error) {
	if req.Worker == "" {
		return nil, fmt.Errorf("rescue: no worker: %w", task.ErrInvalid)
	}
	if req.Lease <= 0 {
		req.Lease = store.DefaultLease
	}
	limit := pgtype.Int8{Int64: int64(req.Limit), Valid: req.Limit > 0}
	var out []task.Task
	err := retrying(ctx, func(ctx context.Context) error {
		var err error
		out, err = scanTasks(s.pool.Query(ctx, s.sql(rescueSQL(req.Owner != "")), req.Worker, micros(req.Lease), limit, req.Owner))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("rescue: %w", err)
	}
	return out, nil
}
