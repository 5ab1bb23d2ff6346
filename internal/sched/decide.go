package sched

import (
	"fmt"
	"time"

	"github.com/grit-run/grit/schedule"
)

// maxCatchUp bounds the slots one tick enqueues: a catch-up window of an
// hour on a schedule every second is 3,600; more than this are counted as
// missed.
const maxCatchUp = 10_000

// maxWalk bounds the slots a tick walks to count those it misses; past
// it, the count is a floor and the walk jumps to the window.
const maxWalk = 1_000_000

// decision is what a tick does to a schedule.
type decision struct {
	state   State
	enqueue []time.Time // the slots to enqueue, in order
	paused  bool        // the schedule paused itself at this tick
}

// decide is the one rule of a tick at now: a schedule whose slots failed
// PauseAfter times in a row pauses itself; otherwise a slot kept by
// buffer_one goes once nothing is unfinished, slots older than the
// catch-up window are missed, and the slots due get tasks unless an
// earlier slot's task is unfinished: then the overlap policy says.
func decide(s schedule.Schedule, tm schedule.Timing, st State, now time.Time) decision {
	s = s.OrDefault()
	d := decision{state: st}
	if st.Paused != nil {
		return d
	}
	if n := st.failedInARow(); s.PauseAfter > 0 && n >= s.PauseAfter {
		d.state.Paused = &Paused{Since: now, Who: "grit", Reason: fmt.Sprintf("%d slots in a row failed (pause_after %d)", n, s.PauseAfter), Failed: n}
		d.state.Buffered = time.Time{}
		d.paused = true
		return d
	}
	busy := st.unfinished()
	if !st.Buffered.IsZero() && !busy {
		d.enqueue = append(d.enqueue, st.Buffered)
		d.state.Buffered = time.Time{}
		busy = true
	}
	due, missed, next := dueSlots(tm, st.Next, now, s.CatchUp)
	d.state.Missed += missed
	d.state.Next = next
	switch {
	case len(due) == 0:
	case s.Overlap == schedule.Allow || !busy:
		d.enqueue = append(d.enqueue, due...)
	case s.Overlap == schedule.BufferOne && d.state.Buffered.IsZero():
		d.state.Buffered = due[0]
		d.state.Overlapped += int64(len(due) - 1)
	default:
		d.state.Overlapped += int64(len(due))
	}
	return d
}

// dueSlots walks the slots from next to now: those older than the
// catch-up window are missed (counted), the others due. It returns the
// first slot after now, where the next tick starts.
func dueSlots(tm schedule.Timing, next, now time.Time, catchUp time.Duration) (due []time.Time, missed int64, after time.Time) {
	if next.IsZero() {
		return nil, 0, tm.Next(now)
	}
	oldest := now.Add(-catchUp)
	at := next
	if every := tm.Every(); every > 0 && at.Before(oldest) {
		// An interval's missed slots are counted, not walked.
		first := tm.Next(oldest.Add(-time.Nanosecond))
		missed = int64(first.Sub(at) / every)
		at = first
	}
	for walked := 0; !at.IsZero() && !at.After(now); walked++ {
		switch {
		case walked == maxWalk:
			at = tm.Next(oldest.Add(-time.Nanosecond))
			continue
		case at.Before(oldest) || len(due) == maxCatchUp:
			missed++
		default:
			due = append(due, at)
		}
		at = tm.Next(at)
	}
	return due, missed, at
}
