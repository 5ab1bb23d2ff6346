package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Enqueue inserts tasks outside any run, in one transaction and one
// statement. A task whose IdempotencyKey is already taken is not inserted:
// the task holding the key is returned in its place (also within one call,
// and when another process inserted it a moment before).
func (s *Store) Enqueue(ctx context.Context, ts []task.NewTask) ([]task.Enqueued, error) {
	if err := checkEnqueue(ts); err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return nil, nil
	}
	var out []task.Enqueued
	var err error
	if len(ts) < copyMin && !anyKey(ts) {
		out, err = s.enqueueNotify(ctx, ts)
	} else {
		err = s.tx(ctx, func(tx pgx.Tx) error {
			var err error
			out, err = s.enqueue(ctx, tx, ts)
			return err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("enqueue: %w", err)
	}
	return out, nil
}

// enqueueNotify inserts tasks without idempotency keys and notifies the
// listeners in one statement, its own transaction: one round trip, where
// a transaction would take four, is most of an enqueue of one task.
func (s *Store) enqueueNotify(ctx context.Context, ts []task.NewTask) ([]task.Enqueued, error) {
	rows := make([]newRow, len(ts))
	for i, t := range ts {
		rows[i] = newRow{t: t, state: task.Ready, at: i}
	}
	var got map[int]task.Task
	err := retrying(ctx, func(ctx context.Context) error {
		var err error
		got, err = s.insertTasks(ctx, s.pool, insertNotifySQL, 0, rows, s.channel)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]task.Enqueued, len(ts))
	for i := range ts {
		out[i].Task = got[i]
	}
	return out, nil
}

// EnqueueTx is Enqueue inside the caller's transaction, which may hold the
// caller's own writes (the transactional outbox): the tasks exist if and
// only if tx commits, and no worker sees them before. Workers listening
// with Wake are told on commit. tx must be on the store's database; it may
// come from another pool, or from Pool.
//
// Unlike Enqueue, a conflict with a concurrent transaction is returned, not
// retried: retrying would mean running the caller's transaction again. On
// any error, roll tx back: tasks of the call may be in it already.
func (s *Store) EnqueueTx(ctx context.Context, tx pgx.Tx, ts []task.NewTask) ([]task.Enqueued, error) {
	if err := checkEnqueue(ts); err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return nil, nil
	}
	out, err := s.enqueue(ctx, tx, ts)
	if err != nil {
		return nil, fmt.Errorf("enqueue: %w", err)
	}
	return out, nil
}

func checkEnqueue(ts []task.NewTask) error {
	for i, t := range ts {
		if len(t.Needs) > 0 {
			return fmt.Errorf("enqueue: task %d (%q): needs are only for tasks of a run (SubmitRun): %w", i, t.Name, task.ErrInvalid)
		}
		if err := t.Validate(); err != nil {
			return fmt.Errorf("enqueue: task %d: %w", i, err)
		}
	}
	return nil
}

// copyMin is the smallest batch that Enqueue sends with COPY, when none of
// its tasks has an idempotency key (COPY cannot skip a taken key).
const copyMin = 1000

// enqueue inserts the first task of each idempotency key (and every task
// without one), then looks up the keys that were taken already.
func (s *Store) enqueue(ctx context.Context, q pgx.Tx, ts []task.NewTask) ([]task.Enqueued, error) {
	return s.enqueueIn(ctx, q, 0, ts)
}

// enqueueIn is enqueue into a run (0: none). A task whose key another
// task holds is answered by that task, Existed, unless it is other work
// (store.KeyConflict): then the whole call fails.
func (s *Store) enqueueIn(ctx context.Context, q pgx.Tx, runID int64, ts []task.NewTask) ([]task.Enqueued, error) {
	out := make([]task.Enqueued, len(ts))
	if len(ts) >= copyMin && !anyKey(ts) && runID == 0 {
		got, err := s.copyTasks(ctx, q, ts)
		if err != nil {
			return nil, err
		}
		for i, t := range got {
			out[i].Task = t
		}
		return out, s.notify(ctx, q)
	}
	first := make([]int, len(ts)) // index of the task that answers for ts[i]
	byKey := map[string]int{}
	var rows []newRow
	for i, t := range ts {
		first[i] = i
		if t.IdempotencyKey != "" {
			if j, dup := byKey[t.IdempotencyKey]; dup {
				first[i] = j
				continue
			}
			byKey[t.IdempotencyKey] = i
		}
		rows = append(rows, newRow{t: t, state: task.Ready, at: i})
	}
	got, err := s.insertTasks(ctx, q, insertTasksSQL, runID, rows)
	if err != nil {
		return nil, err
	}
	inserted := len(got)
	created := make(map[int]bool, inserted)
	for i := range got {
		created[i] = true
	}
	if err := s.takenKeys(ctx, q, ts, got); err != nil {
		return nil, err
	}
	if inserted > 0 {
		if err := s.notify(ctx, q); err != nil {
			return nil, err
		}
	}
	for i, t := range ts {
		out[i] = task.Enqueued{Task: got[first[i]], Existed: first[i] != i || !created[i]}
		if out[i].Existed {
			if err := store.KeyConflict(out[i].Task, t); err != nil {
				return nil, fmt.Errorf("task %d: %w", i, err)
			}
		}
	}
	return out, nil
}

func anyKey(ts []task.NewTask) bool {
	for _, t := range ts {
		if t.IdempotencyKey != "" {
			return true
		}
	}
	return false
}

// copyColumns are the columns copyTasks writes; the others keep their
// defaults.
var copyColumns = []string{"id", "name", "kind", "args", "queue", "group_name", "priority",
	"state", "policy", "poison_after", "timeout_ns", "grace_ns", "next_at", "created_at", "tenant", "trace", "vt", "origin"}

// copyTasks inserts READY tasks with COPY, the fastest way into a table. It
// draws their ids and reads the transaction's time first, so it can return
// the tasks as stored without reading them back.
func (s *Store) copyTasks(ctx context.Context, q pgx.Tx, ts []task.NewTask) ([]task.Task, error) {
	var now time.Time
	var ids []int64
	err := q.QueryRow(ctx, s.sql(`SELECT now(), array(SELECT nextval('$S.tasks_id_seq') FROM generate_series(1, $1))`), len(ts)).
		Scan(&now, &ids)
	if err != nil {
		return nil, fmt.Errorf("draw task ids: %w", err)
	}
	now = now.UTC()
	vts, err := s.stamps(ctx, q, ts, now)
	if err != nil {
		return nil, err
	}
	out := make([]task.Task, len(ts))
	for i, nt := range ts {
		out[i] = newTask(ids[i], nt, now)
	}
	rows := pgx.CopyFromSlice(len(out), func(i int) ([]any, error) {
		t := out[i]
		var args []byte
		if t.Args != nil {
			args = t.Args
		}
		return []any{t.ID, t.Name, t.Kind, args, t.Queue, t.Group, int32(t.Priority), string(t.State),
			t.Policy, int32(t.PoisonAfter), int64(t.Timeout), int64(t.Grace), t.NextAt, t.CreatedAt, t.Tenant, t.Trace, vts[i], t.Origin}, nil
	})
	if _, err := q.CopyFrom(ctx, pgx.Identifier{s.schema, "tasks"}, copyColumns, rows); err != nil {
		return nil, fmt.Errorf("copy tasks: %w", err)
	}
	return out, nil
}

// newTask is a READY task as the database stores it, times at its
// microsecond precision.
func newTask(id int64, nt task.NewTask, now time.Time) task.Task {
	t := task.Task{ID: id, Name: nt.Name, Kind: nt.Kind, Args: nt.Args, Queue: nt.Queue, Group: nt.Group, Tenant: nt.Tenant,
		Priority: nt.Priority, State: task.Ready, Policy: nt.Policy, PoisonAfter: nt.PoisonAfter,
		Timeout: nt.Timeout, Grace: nt.Grace, NextAt: now, CreatedAt: now, Trace: nt.Trace, Origin: nt.Origin}
	if t.Queue == "" {
		t.Queue = "default"
	}
	if !nt.RunAt.IsZero() {
		t.NextAt = nt.RunAt.UTC().Truncate(time.Microsecond)
	}
	return t
}

// takenKeys fills in got the tasks whose key another task held.
func (s *Store) takenKeys(ctx context.Context, q querier, ts []task.NewTask, got map[int]task.Task) error {
	var keys []string
	at := map[string]int{}
	for i, t := range ts {
		if _, ok := got[i]; !ok && t.IdempotencyKey != "" && at[t.IdempotencyKey] == 0 {
			keys = append(keys, t.IdempotencyKey)
			at[t.IdempotencyKey] = i + 1
		}
	}
	if len(keys) == 0 {
		return nil
	}
	held, err := scanTasks(q.Query(ctx, s.sql(`SELECT `+taskCols+` FROM $S.tasks WHERE idempotency_key = ANY($1)`), keys))
	if err != nil {
		return fmt.Errorf("look up idempotency keys: %w", err)
	}
	for _, t := range held {
		got[at[t.IdempotencyKey]-1] = t
	}
	if len(held) != len(keys) {
		return fmt.Errorf("an idempotency key was taken, then its task vanished: %w", task.ErrNotFound)
	}
	return nil
}

// newRow is a task to insert, its state and its index in the caller's list.
type newRow struct {
	t         task.NewTask
	state     task.State
	needsLeft int
	at        int
}

// insertTasksSQL inserts the rows given as arrays. Each row's id is drawn
// first, so the returned rows can be matched to the input by ordinality. A
// row whose idempotency key is taken is skipped. A READY task is due at
// RunAt, or now; a PENDING one keeps RunAt (if any) for when its needs are
// met. A task due now is stamped for its fair turn: $18 is its rank in its
// lane (store.FairRanks, 0: not stamped here), after the lane's base
// (fair_lane); the others are stamped by the claim that finds them due.
// $19 is where each task came from (task.Origin).
const insertTasksSQL = `WITH i AS (
	SELECT nextval('$S.tasks_id_seq') AS id, i.*
	FROM unnest($2::text[], $3::text[], $4::bytea[], $5::text[], $6::text[], $7::int[],
		$8::text[], $9::text[], $10::int[], $11::bigint[], $12::bigint[], $13::timestamptz[],
		$14::text[], $15::int[], $16::text[], $17::text[], $18::int[], $19::text[])
	WITH ORDINALITY AS i (name, kind, args, queue, group_name, priority, state, policy,
		poison_after, timeout_ns, grace_ns, next_at, idempotency_key, needs_left, tenant, trace, rank, origin, ord)
), l AS (
	SELECT d.queue, d.priority, d.tenant, f.base, f.step
	FROM (SELECT DISTINCT i.queue, i.priority, i.tenant FROM i WHERE i.rank > 0) d
		CROSS JOIN LATERAL $S.fair_lane(d.queue, d.priority, d.tenant) f
), t AS (
	INSERT INTO $S.tasks (id, run_id, name, kind, args, queue, group_name, priority, state,
		policy, poison_after, timeout_ns, grace_ns, next_at, idempotency_key, needs_left, tenant, trace, vt, origin)
	SELECT i.id, $1, i.name, i.kind, i.args, i.queue, i.group_name, i.priority, i.state, i.policy,
		i.poison_after, i.timeout_ns, i.grace_ns,
		CASE WHEN i.state = 'READY' THEN coalesce(i.next_at, now()) ELSE i.next_at END,
		i.idempotency_key, i.needs_left, i.tenant, i.trace, l.base + i.rank * l.step, i.origin
	FROM i LEFT JOIN l ON i.rank > 0 AND l.queue = i.queue AND l.priority = i.priority AND l.tenant = i.tenant
	ORDER BY i.ord
	ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
	RETURNING *
)
SELECT i.ord, ` + taskColsOf + ` FROM t JOIN i ON i.id = t.id`

// insertNotifySQL is insertTasksSQL that also notifies the listeners on
// channel $20 (once: a volatile CTE is evaluated once).
var insertNotifySQL = strings.Replace(insertTasksSQL, "\nSELECT i.ord, ", `, n AS (
	SELECT pg_notify($20, '')
)
SELECT i.ord, `, 1) + ` CROSS JOIN n`

// fairRanks are the rows' ranks in their lanes for fair claims
// (store.FairRanks), by the process's clock: the READY ones due now are
// ranked, the others are 0. A task the process takes for due a moment
// before the database does is stamped, and still not claimed before its
// time (the claim checks that too); one it takes for not due yet is
// stamped by the claim that finds it due.
func fairRanks(rows []newRow) []int32 {
	var ready []task.NewTask
	var at []int
	for i, r := range rows {
		if r.state == task.Ready {
			ready, at = append(ready, r.t), append(at, i)
		}
	}
	ranks := make([]int32, len(rows))
	for j, rank := range store.FairRanks(ready, time.Now()) {
		ranks[at[j]] = int32(rank)
	}
	return ranks
}

// insertTasks inserts rows in one statement and returns the inserted tasks
// by their rows' at. runID 0 is none.
func (s *Store) insertTasks(ctx context.Context, q querier, sql string, runID int64, rows []newRow, extra ...any) (map[int]task.Task, error) {
	n := len(rows)
	var (
		names, kinds, queues, groups, states, policies = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		tenants, traces, origins                       = make([]string, n), make([]string, n), make([]string, n)
		args                                           = make([][]byte, n)
		prios, poison, needs                           = make([]int32, n), make([]int32, n), make([]int32, n)
		timeouts, graces                               = make([]int64, n), make([]int64, n)
		nextAt                                         = make([]pgtype.Timestamptz, n)
		keys                                           = make([]pgtype.Text, n)
	)
	for i, r := range rows {
		t := r.t
		names[i], kinds[i], groups[i], states[i], policies[i] = t.Name, t.Kind, t.Group, string(r.state), t.Policy
		queues[i], tenants[i], traces[i], origins[i] = t.Queue, t.Tenant, t.Trace, t.Origin
		if queues[i] == "" {
			queues[i] = "default"
		}
		if t.Args != nil {
			args[i] = []byte(t.Args)
		}
		prios[i], poison[i], needs[i] = int32(t.Priority), int32(t.PoisonAfter), int32(r.needsLeft)
		timeouts[i], graces[i] = int64(t.Timeout), int64(t.Grace)
		nextAt[i], keys[i] = tstz(t.RunAt), nullText(t.IdempotencyKey)
	}
	run := pgtype.Int8{Int64: runID, Valid: runID != 0}
	res, err := q.Query(ctx, s.sql(sql), append([]any{run, names, kinds, args, queues, groups, prios,
		states, policies, poison, timeouts, graces, nextAt, keys, needs, tenants, traces, fairRanks(rows), origins}, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("insert tasks: %w", err)
	}
	defer res.Close()
	got := make(map[int]task.Task, n)
	for res.Next() {
		var ord int64
		t, err := scanTaskAfter(res, &ord)
		if err != nil {
			return nil, fmt.Errorf("insert tasks: %w", err)
		}
		got[rows[ord-1].at] = t
	}
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("insert tasks: %w", err)
	}
	return got, nil
}
