package sched

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// maxBackfill bounds the slots of one backfill.
const maxBackfill = 1000

// tries bounds the writes of an operator's action that other writes keep
// coming before.
const tries = 20

// ErrNotFound is matched by the error of an action on a schedule that is
// not in the store (and by task.ErrNotFound).
var ErrNotFound = fmt.Errorf("schedule not found: %w", task.ErrNotFound)

// change reads schedule name and writes what fn makes of it, again while
// other writes come first. fn returns the tasks to enqueue with their
// slots, and may change the state.
func change(ctx context.Context, st store.Store, name string, now time.Time,
	fn func(s schedule.Schedule, tm schedule.Timing, state *State) ([]time.Time, bool, error)) (store.ScheduleRow, error) {
	sc, err := Of(st)
	if err != nil {
		return store.ScheduleRow{}, err
	}
	for range tries {
		r, err := sc.GetSchedule(ctx, name)
		if errors.Is(err, task.ErrNotFound) {
			return store.ScheduleRow{}, fmt.Errorf("schedule %q: %w (grit schedules list shows those there are)", name, ErrNotFound)
		}
		if err != nil {
			return store.ScheduleRow{}, err
		}
		s, tm, state, err := load(r)
		if err != nil {
			return store.ScheduleRow{}, err
		}
		observe(ctx, st, &state)
		at, trigger, err := fn(s, tm, &state)
		if err != nil {
			return store.ScheduleRow{}, err
		}
		ts := make([]task.NewTask, len(at))
		slots := make([]Slot, len(at))
		for i, a := range at {
			if ts[i], err = s.NewTask(a); err != nil {
				return store.ScheduleRow{}, err
			}
			if trigger {
				ts[i].IdempotencyKey = schedule.TriggerKey(name, a)
				ts[i].RunAt = time.Time{}
			}
			slots[i] = Slot{At: a, Trigger: trigger}
		}
		row, ok, err := write(ctx, sc, r, nil, ts, state, s.PauseAfter, slots, func(n State) time.Time { return dueAt(s, n, now) })
		if err != nil || ok {
			return row, err
		}
	}
	return store.ScheduleRow{}, fmt.Errorf("schedule %q: other writes kept coming first; try again", name)
}

// Pause pauses schedule name: no slot gets a task until it is resumed
// (the slots in between are not caught up). Pausing a paused schedule
// keeps its pause.
func Pause(ctx context.Context, st store.Store, name, who, reason string, now time.Time) (store.ScheduleRow, error) {
	return change(ctx, st, name, now, func(_ schedule.Schedule, _ schedule.Timing, state *State) ([]time.Time, bool, error) {
		if state.Paused == nil {
			state.Paused = &Paused{Since: now, Who: who, Reason: reason}
			state.Buffered = time.Time{}
		}
		return nil, false, nil
	})
}

// Resume resumes schedule name from its next slot after now; the failed
// slots before no longer count towards its PauseAfter.
func Resume(ctx context.Context, st store.Store, name string, now time.Time) (store.ScheduleRow, error) {
	return change(ctx, st, name, now, func(_ schedule.Schedule, tm schedule.Timing, state *State) ([]time.Time, bool, error) {
		if state.Paused != nil {
			state.Paused = nil
			state.Resumed = now
			state.Next = tm.Next(now)
		}
		return nil, false, nil
	})
}

// Trigger enqueues a task of schedule name now, outside its slots and
// whatever its overlap policy: an operator asked for it. It works on a
// paused schedule too.
func Trigger(ctx context.Context, st store.Store, name string, now time.Time) (task.Task, error) {
	row, err := change(ctx, st, name, now, func(schedule.Schedule, schedule.Timing, *State) ([]time.Time, bool, error) {
		return []time.Time{now}, true, nil
	})
	if err != nil {
		return task.Task{}, err
	}
	return newest(ctx, st, row)
}

// Backfill enqueues one task for each slot of schedule name from from to
// to (both included), at most 1000, whatever its overlap policy and
// catch-up window: each slot keeps its own idempotency key, so a slot
// whose task is still in the store is not run twice. It returns how many
// slots the range has and how many got a new task.
func Backfill(ctx context.Context, st store.Store, name string, from, to, now time.Time) (slots, enqueued int, err error) {
	if to.Before(from) {
		return 0, 0, fmt.Errorf("%w: backfill of schedule %q: from %s is after to %s", schedule.ErrInvalid, name, from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	var before int64
	row, err := change(ctx, st, name, now, func(_ schedule.Schedule, tm schedule.Timing, state *State) ([]time.Time, bool, error) {
		var at []time.Time
		for a := tm.Next(from.Add(-time.Nanosecond)); !a.IsZero() && !a.After(to); a = tm.Next(a) {
			if len(at) == maxBackfill {
				return nil, false, fmt.Errorf("%w: backfill of schedule %q: more than %d slots from %s to %s: backfill a shorter range at a time",
					schedule.ErrInvalid, name, maxBackfill, from.Format(time.RFC3339), to.Format(time.RFC3339))
			}
			at = append(at, a)
		}
		slots, before = len(at), state.Enqueued
		return at, false, nil
	})
	if err != nil {
		return 0, 0, err
	}
	state, err := decodeState(row.State)
	return slots, int(state.Enqueued - before), err
}

// newest is the task of the newest slot of row.
func newest(ctx context.Context, st store.Store, row store.ScheduleRow) (task.Task, error) {
	state, err := decodeState(row.State)
	if err != nil || len(state.Recent) == 0 {
		return task.Task{}, fmt.Errorf("schedule %q: no task recorded: %v", row.Name, err)
	}
	return st.GetTask(ctx, state.Recent[len(state.Recent)-1].Task)
}

// Delete deletes schedule name from the store; its tasks stay. A worker
// that declares it makes it again when it starts.
func Delete(ctx context.Context, st store.Store, name string) error {
	sc, err := Of(st)
	if err != nil {
		return err
	}
	ok, err := sc.DeleteSchedule(ctx, name)
	if err == nil && !ok {
		err = fmt.Errorf("schedule %q: %w (grit schedules list shows those there are)", name, ErrNotFound)
	}
	return err
}
