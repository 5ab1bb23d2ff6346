package sched

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Declare puts schedules in the store, as of now: a new one has its first
// slot after now; one already there keeps its state (its last slot, its
// counts, its pause: an operator's pause outlives a restart) unless its
// timing changed, and then starts its slots after now. Declaring what the
// store holds already writes nothing, so a fleet that starts at once does
// not fight over it.
func Declare(ctx context.Context, st store.Store, now time.Time, ss ...schedule.Schedule) error {
	sc, err := Of(st)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, s := range ss {
		if err := s.Validate(); err != nil {
			return err
		}
		if seen[s.Name] {
			return fmt.Errorf("%w: schedule %q is declared twice: give each schedule a name of its own", schedule.ErrInvalid, s.Name)
		}
		seen[s.Name] = true
		if err := declare(ctx, sc, s, now); err != nil {
			return err
		}
	}
	return nil
}

func declare(ctx context.Context, sc store.Scheduler, s schedule.Schedule, now time.Time) error {
	def, err := s.Encode()
	if err != nil {
		return err
	}
	tm, err := s.Timing()
	if err != nil {
		return err
	}
	key := timingKey(s)
	for range tries {
		r, err := sc.GetSchedule(ctx, s.Name)
		var state State
		switch {
		case errors.Is(err, task.ErrNotFound):
			r = store.ScheduleRow{Name: s.Name}
			state = State{Next: tm.Next(now), Timing: key}
		case err != nil:
			return fmt.Errorf("declare schedule %q: %w", s.Name, err)
		case bytes.Equal(r.Def, def):
			return nil
		default:
			if state, err = decodeState(r.State); err != nil {
				return fmt.Errorf("declare schedule %q: %w", s.Name, err)
			}
			if state.Timing != key {
				state.Next, state.Buffered, state.Timing = tm.Next(now), time.Time{}, key
			}
		}
		_, ok, err := write(ctx, sc, r, def, nil, state, s.PauseAfter, nil, func(n State) time.Time { return dueAt(s, n, now) })
		if err != nil || ok {
			return err
		}
	}
	return fmt.Errorf("declare schedule %q: other writes kept coming first; try again", s.Name)
}
