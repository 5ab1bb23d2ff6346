// Package sched ticks the fleet's schedules (package schedule): every
// worker lists the schedules due, decides which slots get a task, and
// writes the schedule's new state with those tasks in one transaction
// at the version it read (store.Scheduler), so that two workers at one
// schedule never both move it. The slot's time in each task's
// idempotency key makes one task per slot whatever happens between.
//
// The rules live here once, for the engines that tick and for the
// operators' commands (declare, pause, resume, trigger, backfill), the
// CLI's, the API's and the dashboard's.
package sched

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// State is what the fleet knows of a schedule's slots, as the store keeps
// it (store.ScheduleRow.State).
type State struct {
	// Next is the first slot not yet decided.
	Next time.Time `json:"next"`
	// Buffered is the slot that buffer_one keeps until the unfinished
	// task ends; zero for none.
	Buffered time.Time `json:"buffered,omitzero"`
	// Recent are the latest slots that got a task, oldest first.
	Recent []Slot `json:"recent,omitempty"`
	// Enqueued counts the tasks the slots, triggers and backfills made.
	Enqueued int64 `json:"enqueued,omitempty"`
	// Missed counts the slots skipped because they were older than the
	// catch-up window when the fleet came to them.
	Missed int64 `json:"missed,omitempty"`
	// Overlapped counts the slots skipped because an earlier slot's task
	// had not finished (overlap skip, or buffer_one's beyond the one).
	Overlapped int64 `json:"overlapped,omitempty"`
	// Paused, when set, stops the slots.
	Paused *Paused `json:"paused,omitempty"`
	// Resumed is when the schedule was last resumed: the failed slots
	// before it no longer count towards its PauseAfter.
	Resumed time.Time `json:"resumed,omitzero"`
	// Timing is the timing the state was decided on (see timingKey): a
	// declaration with another starts its slots anew.
	Timing string `json:"timing"`
}

// Slot is a slot that got a task.
type Slot struct {
	At   time.Time `json:"at"`
	Task int64     `json:"task"`
	// Trigger is a task an operator asked for: a trigger or a backfill.
	Trigger bool `json:"trigger,omitempty"`
	// Outcome is the task's end (a finished task.State, or DEAD_LETTER:
	// a dead letter's slot has ended, and the schedule goes on), Gone when
	// it was pruned before a ticker saw it end, "" while it has not ended.
	Outcome task.State `json:"outcome,omitempty"`
}

// Gone is the outcome of a slot whose task was pruned before a ticker saw
// it end.
const Gone task.State = "GONE"

// Paused is why a schedule is paused.
type Paused struct {
	Since  time.Time `json:"since"`
	Who    string    `json:"who"`
	Reason string    `json:"reason,omitempty"`
	// Failed is, for a schedule that paused itself, the failed slots in a
	// row that paused it.
	Failed int `json:"failed,omitempty"`
}

// keepRecent is how many slots State.Recent keeps at least.
const keepRecent = 20

// StateOf is the state of a schedule's row.
func StateOf(r store.ScheduleRow) (State, error) { return decodeState(r.State) }

func decodeState(b []byte) (State, error) {
	var st State
	if len(b) == 0 {
		return st, nil
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return State{}, fmt.Errorf("schedule state: %w", err)
	}
	return st, nil
}

// timingKey is what of a declaration decides its slots.
func timingKey(s schedule.Schedule) string {
	s = s.OrDefault()
	return fmt.Sprintf("cron=%s every=%s zone=%s", s.Cron, s.Every, s.Zone)
}

// unfinished reports whether a slot's task has not ended.
func (st *State) unfinished() bool {
	for _, sl := range st.Recent {
		if sl.Outcome == "" {
			return true
		}
	}
	return false
}

// failedInARow counts the newest slots whose tasks failed, back to the
// first that did not (unfinished ones aside), since the last resume.
func (st *State) failedInARow() int {
	n := 0
	for i := len(st.Recent) - 1; i >= 0; i-- {
		sl := st.Recent[i]
		switch {
		case sl.Outcome == "":
			continue
		case !sl.At.After(st.Resumed) && !st.Resumed.IsZero():
			return n
		case sl.Outcome == task.Failed || sl.Outcome == task.DeadLetter:
			n++
		default:
			return n
		}
	}
	return n
}

// add records slots that got tasks, keeping the newest keep of them.
func (st *State) add(keep int, sls ...Slot) {
	st.Recent = append(st.Recent, sls...)
	if n := max(keep, keepRecent); len(st.Recent) > n {
		st.Recent = append([]Slot(nil), st.Recent[len(st.Recent)-n:]...)
	}
}
