package sched

import (
	"context"
	"time"

	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/store"
)

// View is a schedule as an operator sees it.
type View struct {
	Schedule schedule.Schedule // with its defaults
	State    State             // the outcomes of its recent slots as the store has them now
	// NextSlots are its next slots after now (none while paused).
	NextSlots []time.Time
	Version   int64
	Updated   time.Time
	// Err is what is wrong with a row that cannot be read (a declaration
	// of a newer grit); the other fields are zero but Schedule.Name.
	Err error
}

// List is the store's schedules as operators see them, by name, each
// with up to next of its next slots after now.
func List(ctx context.Context, st store.Store, now time.Time, next int) ([]View, error) {
	sc, err := Of(st)
	if err != nil {
		return nil, err
	}
	rows, err := sc.Schedules(ctx, time.Time{})
	if err != nil {
		return nil, err
	}
	out := make([]View, 0, len(rows))
	for _, r := range rows {
		out = append(out, view(ctx, st, r, now, next))
	}
	return out, nil
}

// Get is one schedule as List shows it.
func Get(ctx context.Context, st store.Store, name string, now time.Time, next int) (View, error) {
	sc, err := Of(st)
	if err != nil {
		return View{}, err
	}
	r, err := sc.GetSchedule(ctx, name)
	if err != nil {
		return View{}, err
	}
	return view(ctx, st, r, now, next), nil
}

func view(ctx context.Context, st store.Store, r store.ScheduleRow, now time.Time, next int) View {
	s, tm, state, err := load(r)
	if err != nil {
		return View{Schedule: schedule.Schedule{Name: r.Name}, Err: err, Version: r.Version, Updated: r.Updated}
	}
	observe(ctx, st, &state)
	v := View{Schedule: s.OrDefault(), State: state, Version: r.Version, Updated: r.Updated}
	if state.Paused == nil {
		at := now
		if !state.Next.IsZero() && state.Next.After(now) {
			v.NextSlots = append(v.NextSlots, state.Next)
			at = state.Next
		}
		for len(v.NextSlots) < next {
			if at = tm.Next(at); at.IsZero() {
				break
			}
			v.NextSlots = append(v.NextSlots, at)
		}
	}
	return v
}
