package sched

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// ErrNoScheduler is matched by the error of a store that keeps no
// schedules.
var ErrNoScheduler = errors.New("sched: the store keeps no schedules (it is not a store.Scheduler)")

// Watch is how often a ticker looks again at a schedule whose tasks it
// waits for: buffer_one's kept slot, or the outcome PauseAfter counts.
const Watch = 5 * time.Second

// Of is the store's store.Scheduler, or ErrNoScheduler.
func Of(st store.Store) (store.Scheduler, error) {
	sc, ok := st.(store.Scheduler)
	if !ok {
		return nil, ErrNoScheduler
	}
	return sc, nil
}

// Ticker ticks the store's schedules.
type Ticker struct {
	Store  store.Store
	Logger *slog.Logger
	// Alert, if set, is told of each schedule that paused itself, once
	// the store has recorded it.
	Alert func(alert.Event)
}

// Tick does what the schedules due at now have to do. A schedule another
// worker moved first is left to it; an error on one schedule is logged
// and the others go on.
func (k *Ticker) Tick(ctx context.Context, now time.Time) error {
	sc, err := Of(k.Store)
	if err != nil {
		return err
	}
	rows, err := sc.Schedules(ctx, now)
	if err != nil {
		return fmt.Errorf("tick schedules: %w", err)
	}
	for _, r := range rows {
		if err := k.tick(ctx, sc, r, now); err != nil && ctx.Err() == nil && k.Logger != nil {
			k.Logger.Warn("schedule tick failed; trying again at the next tick", "schedule", r.Name, "err", err)
		}
	}
	return ctx.Err()
}

func (k *Ticker) tick(ctx context.Context, sc store.Scheduler, r store.ScheduleRow, now time.Time) error {
	s, tm, st, err := load(r)
	if err != nil {
		return err
	}
	observed := observe(ctx, k.Store, &st)
	d := decide(s, tm, st, now)
	due := dueAt(s, d.state, now)
	if !observed && len(d.enqueue) == 0 && !d.paused && d.state.Next.Equal(st.Next) && due.Equal(r.Due) &&
		d.state.Missed == st.Missed && d.state.Overlapped == st.Overlapped && d.state.Buffered.Equal(st.Buffered) {
		return nil
	}
	ts := make([]task.NewTask, len(d.enqueue))
	slots := make([]Slot, len(d.enqueue))
	for i, at := range d.enqueue {
		if ts[i], err = s.NewTask(at); err != nil {
			return err
		}
		slots[i] = Slot{At: at}
	}
	_, ok, err := write(ctx, sc, r, nil, ts, d.state, s.PauseAfter, slots, func(n State) time.Time { return dueAt(s, n, now) })
	if err != nil || !ok {
		return err
	}
	if d.paused && k.Alert != nil {
		k.Alert(alert.SchedulePausedEvent(r.Name, d.state.Paused.Failed, lastFailed(ctx, k.Store, d.state), now))
	}
	return nil
}

// dueAt is when a ticker next has work on a schedule in state st at now:
// its next slot, or sooner while it waits for a task (buffer_one's kept
// slot, PauseAfter's outcome); never when it is paused.
func dueAt(s schedule.Schedule, st State, now time.Time) time.Time {
	switch {
	case st.Paused != nil:
		return time.Time{}
	case !st.Buffered.IsZero() || (s.PauseAfter > 0 && st.unfinished()):
		if st.Next.IsZero() || now.Add(Watch).Before(st.Next) {
			return now.Add(Watch)
		}
	}
	return st.Next
}

// observe fills in the outcomes of the slots whose tasks have ended, in
// one read of those tasks, and reports whether it found any.
func observe(ctx context.Context, st store.Store, s *State) bool {
	var ids []int64
	for _, sl := range s.Recent {
		if sl.Outcome == "" && sl.Task != 0 {
			ids = append(ids, sl.Task)
		}
	}
	if len(ids) == 0 {
		return false
	}
	ts, err := st.ListTasks(ctx, task.Filter{IDs: ids})
	if err != nil {
		return false // known next time
	}
	states := make(map[int64]task.State, len(ts))
	for _, t := range ts {
		states[t.ID] = t.State
	}
	found := false
	for i := range s.Recent {
		sl := &s.Recent[i]
		if sl.Outcome != "" || sl.Task == 0 {
			continue
		}
		switch state, ok := states[sl.Task]; {
		case !ok:
			sl.Outcome, found = Gone, true
		case ended(state):
			sl.Outcome, found = state, true
		}
	}
	return found
}

// ended reports whether a slot's task has ended: finished, or dead-lettered
// (it waits for an operator, and a replay does not make its slot run
// again: the schedule goes on).
func ended(s task.State) bool { return s.Terminal() || s == task.DeadLetter }

// lastFailed is the task of the newest failed slot, for the alert.
func lastFailed(ctx context.Context, st store.Store, s State) task.Task {
	for i := len(s.Recent) - 1; i >= 0; i-- {
		if o := s.Recent[i].Outcome; o == task.Failed || o == task.DeadLetter {
			t, err := st.GetTask(ctx, s.Recent[i].Task)
			if err == nil {
				return t
			}
			return task.Task{ID: s.Recent[i].Task}
		}
	}
	return task.Task{}
}

// load decodes a row.
func load(r store.ScheduleRow) (schedule.Schedule, schedule.Timing, State, error) {
	s, err := schedule.Decode(r.Def)
	if err != nil {
		return schedule.Schedule{}, schedule.Timing{}, State{}, fmt.Errorf("schedule %q: %w", r.Name, err)
	}
	tm, err := s.Timing()
	if err != nil {
		return schedule.Schedule{}, schedule.Timing{}, State{}, err
	}
	st, err := decodeState(r.State)
	if err != nil {
		return schedule.Schedule{}, schedule.Timing{}, State{}, fmt.Errorf("schedule %q: %w", r.Name, err)
	}
	return s, tm, st, nil
}

// write writes state st to the schedule r (a new one when r.Version is
// 0, with def), enqueuing ts, whose slots are slots; due gives the row's
// due time from the state written. ok is false when another write came
// first.
func write(ctx context.Context, sc store.Scheduler, r store.ScheduleRow, def json.RawMessage, ts []task.NewTask, st State,
	pauseAfter int, slots []Slot, due func(State) time.Time) (store.ScheduleRow, bool, error) {
	return sc.WriteSchedule(ctx, store.ScheduleWrite{
		Name: r.Name, Version: r.Version, Def: def, Tasks: ts,
		Then: func(enq []task.Enqueued) (json.RawMessage, time.Time, error) {
			next := st
			next.Recent = append([]Slot(nil), st.Recent...)
			for i, e := range enq {
				sl := slots[i]
				sl.Task = e.ID
				if ended(e.State) {
					sl.Outcome = e.State
				}
				if !e.Existed {
					next.Enqueued++
				}
				next.add(pauseAfter, sl)
			}
			b, err := json.Marshal(next)
			return b, due(next), err
		},
	})
}
