package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Enqueue inserts tasks outside any run, in one transaction. A task whose
// IdempotencyKey is already taken is not inserted: the task holding the key
// is answered in its place (also within one call), or the call fails when
// that task is other work (store.KeyConflict).
func (s *Store) Enqueue(ctx context.Context, ts []task.NewTask) ([]task.Enqueued, error) {
	for i, t := range ts {
		if len(t.Needs) > 0 {
			return nil, fmt.Errorf("enqueue: task %d (%q): needs are only for tasks of a run (SubmitRun): %w", i, t.Name, task.ErrInvalid)
		}
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("enqueue: task %d: %w", i, err)
		}
	}
	if len(ts) == 0 {
		return nil, nil
	}
	out := make([]task.Enqueued, len(ts))
	err := s.w.do(ctx, func(x *wtx) error {
		ranks, st := store.FairRanks(ts, x.now), newStamps(x)
		for i, t := range ts {
			var vt any // not due yet: stamped by the claim that finds it due
			if ranks[i] > 0 {
				v, err := st.at(store.LaneOf(t), ranks[i])
				if err != nil {
					return err
				}
				vt = v
			}
			got, err := enqueueIn(x, 0, t, vt)
			if err != nil {
				return fmt.Errorf("task %d: %w", i, err)
			}
			out[i] = got
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("enqueue: %w", err)
	}
	return out, nil
}

// enqueueIn inserts a READY task in a run (0: none), stamped vt for fair
// claims (nil: not yet), or answers the task that holds its idempotency key.
func enqueueIn(x *wtx, runID int64, t task.NewTask, vt any) (task.Enqueued, error) {
	if t.IdempotencyKey != "" {
		got, err := scanTask(x.queryRow(`SELECT `+taskCols+` FROM tasks WHERE idempotency_key = ?`, t.IdempotencyKey))
		if err == nil {
			return task.Enqueued{Task: got, Existed: true}, store.KeyConflict(got, t)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return task.Enqueued{}, err
		}
	}
	got, err := insertTask(x, t, runID, task.Ready, 0, vt)
	return task.Enqueued{Task: got}, err
}

const insertTaskSQL = `INSERT INTO tasks (run_id, name, kind, args, queue, group_name,
	priority, state, policy, poison_after, timeout, grace, next_at,
	idempotency_key, needs_left, created_at, tenant, trace, vt, origin)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
RETURNING ` + taskCols

// insertTask inserts one task. A READY task is due at RunAt, or now; a
// PENDING one keeps RunAt (if any) for when its needs are met. vt is its
// stamp for fair claims, nil for one the claim that finds it due stamps.
func insertTask(x *wtx, t task.NewTask, runID int64, state task.State, needsLeft int, vt any) (task.Task, error) {
	queue := t.Queue
	if queue == "" {
		queue = "default"
	}
	nextAt := micros(t.RunAt)
	if state == task.Ready && nextAt == nil {
		nextAt = x.now.UnixMicro()
	}
	var args any
	if t.Args != nil {
		args = []byte(t.Args)
	}
	var run any
	if runID != 0 {
		run = runID
	}
	got, err := scanTask(x.queryRow(insertTaskSQL, run, t.Name, t.Kind, args, queue, t.Group,
		t.Priority, string(state), t.Policy, t.PoisonAfter, int64(t.Timeout), int64(t.Grace),
		nextAt, nullString(t.IdempotencyKey), needsLeft, x.now.UnixMicro(), t.Tenant, t.Trace, vt, t.Origin))
	if err != nil {
		return task.Task{}, fmt.Errorf("insert task %q: %w", t.Name, err)
	}
	x.due = x.due || state == task.Ready
	return got, nil
}
