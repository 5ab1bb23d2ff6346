package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// AwaitRecheck is how long a task that awaits others (Await) waits at
// most before it looks at them again, whatever woke it or did not: the
// end of the last of them wakes it at once, in the store's transaction;
// this is for the ends that wake nothing (a task of a run failed by its
// run's propagation).
const AwaitRecheck = time.Hour

// SetResult keeps result, JSON, as the result of the handler's task,
// fenced by its attempt's lease: the last one set wins. A result past
// task.MaxResult, or that the store refuses, fails the task permanently.
func SetResult(ctx context.Context, result json.RawMessage) error {
	c, err := inWorker(ctx, "set result", "set a result")
	if err != nil {
		return err
	}
	aw, ok := c.e.cfg.Store.(store.Awaiter)
	if !ok {
		return retry.Permanent(fmt.Errorf("set result: the store (%T) keeps no results (it is not a store.Awaiter): use the SQLite or PostgreSQL store", c.e.cfg.Store))
	}
	err = aw.SetResult(ctx, c.a.t.ID, c.a.t.LeaseToken, result)
	if errors.Is(err, task.ErrInvalid) {
		return retry.Permanent(fmt.Errorf("set result: %w", err))
	}
	if err != nil {
		return fmt.Errorf("set result: %w", err)
	}
	return nil
}

// Await answers the tasks ids, in that order, once every one has ended
// (its state Terminal), each with its state, result and last error. It
// is a step, "await": once they have all ended, it records them, so that
// a later attempt answers the same without looking again. Until then it
// returns a *WaitError, for the handler to return: the attempt ends, its
// task is SENSING with its slot free until the last of them ends (which
// makes it due at once) or AwaitRecheck, and it reaches Await again.
func Await(ctx context.Context, ids []int64) ([]task.Child, error) {
	c, aw, err := awaiter(ctx, ids)
	if err != nil {
		return nil, err
	}
	l := &c.a.steps
	l.mu.Lock()
	defer l.mu.Unlock()
	at, err := l.reach(ctx, c, "await")
	if err != nil {
		return nil, err
	}
	if at.done != nil {
		return awaitedOf(at.done, ids)
	}
	kids, err := childrenOf(ctx, aw, ids)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(kids, func(k task.Child) bool { return !k.State.Terminal() }) {
		l.waiting = &WaitError{Tasks: ids, Until: c.e.storeNow().Add(AwaitRecheck)}
		return nil, l.waiting
	}
	if at.s.Result, err = json.Marshal(task.Awaited{Children: kids}); err != nil {
		return nil, fmt.Errorf("await: %w", err)
	}
	if len(at.s.Result) > task.MaxStepResult {
		return nil, retry.Permanent(fmt.Errorf("await: the %d tasks' results come to %d bytes of JSON, past the %d a step records: await fewer at a time, or have them set smaller results (a reference: a key, a URL)",
			len(ids), len(at.s.Result), task.MaxStepResult))
	}
	got, err := c.e.stepper().RecordStep(ctx, c.a.t.ID, c.a.t.LeaseToken, at.s)
	if err != nil {
		return nil, fmt.Errorf("await: %w", err)
	}
	l.passed(got)
	return kids, nil
}

// awaiter is the attempt and the store's Awaiter of an await, once its
// ids are checked.
func awaiter(ctx context.Context, ids []int64) (*attemptCtx, store.Awaiter, error) {
	c, err := inWorker(ctx, "await", "await tasks")
	if err != nil {
		return nil, nil, err
	}
	aw, ok := c.e.cfg.Store.(store.Awaiter)
	if !ok {
		return nil, nil, retry.Permanent(fmt.Errorf("await: the store (%T) cannot await tasks (it is not a store.Awaiter): use the SQLite or PostgreSQL store", c.e.cfg.Store))
	}
	if len(ids) == 0 {
		return nil, nil, retry.Permanent(errors.New("await: no task ids: give the ids of the tasks to await (those Enqueue returned)"))
	}
	seen := make(map[int64]bool, len(ids))
	for i, id := range ids {
		switch {
		case id == c.a.t.ID:
			return nil, nil, retry.Permanent(fmt.Errorf("await: id %d (at %d) is the handler's own task, which cannot end while it waits: give the ids of other tasks", id, i))
		case seen[id]:
			return nil, nil, retry.Permanent(fmt.Errorf("await: id %d twice (again at %d): give each task once", id, i))
		}
		seen[id] = true
	}
	return c, aw, nil
}

// childrenOf reads the tasks ids, in that order: every one must exist.
func childrenOf(ctx context.Context, aw store.Awaiter, ids []int64) ([]task.Child, error) {
	got, err := aw.Children(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("await: %w", err)
	}
	byID := make(map[int64]task.Child, len(got))
	for _, k := range got {
		byID[k.ID] = k
	}
	out := make([]task.Child, 0, len(ids))
	var missing []int64
	for _, id := range ids {
		k, ok := byID[id]
		if !ok {
			missing = append(missing, id)
		}
		out = append(out, k)
	}
	if len(missing) > 0 {
		return nil, retry.Permanent(fmt.Errorf("await: no task %v in the store: await the ids Enqueue returned (a task pruned by retention is gone too)", missing))
	}
	return out, nil
}

// awaitedOf is what the await step rec recorded, which must be of the
// tasks ids.
func awaitedOf(rec *task.Step, ids []int64) ([]task.Child, error) {
	var a task.Awaited
	if err := json.Unmarshal(rec.Result, &a); err != nil {
		return nil, retry.Permanent(fmt.Errorf("await: step %d records %.200s, not an await's tasks: %w", rec.Seq, rec.Result, ErrStepOrder))
	}
	got := make([]int64, len(a.Children))
	for i, k := range a.Children {
		got[i] = k.ID
	}
	if !slices.Equal(got, ids) {
		return nil, retry.Permanent(fmt.Errorf("%w: the handler awaits tasks %v as its step %d, where attempt %d awaited %v: await the same tasks on every attempt (enqueue them with grit.ChildKey keys)",
			ErrStepOrder, ids, rec.Seq, rec.Attempt, got))
	}
	return a.Children, nil
}
