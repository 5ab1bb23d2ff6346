package decide

import (
	"fmt"
	"time"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Snooze decides what a snooze of t for delay leads to at now: SENSING
// until now+delay, its attempt given back (f.Refund) and counted in the
// task's Snoozes, whoever snoozed (a Go handler's grit.Snooze, a process
// task's snooze exit code, a remote worker's Snooze). max bounds the
// snoozes (0: no bound): when t has snoozed max times already, Snooze
// writes nothing and returns the failure to decide in its place
// (Failure): a permanent one wrapping a *SnoozeLimitError, so that a
// sensor whose condition never holds ends FAILED, and says why.
func Snooze(f *store.Finish, t task.Task, delay time.Duration, max int, now time.Time) error {
	if max > 0 && t.Snoozes >= max {
		return retry.Permanent(&SnoozeLimitError{Snoozes: t.Snoozes, Max: max})
	}
	f.State, f.NextAt, f.Refund = task.Sensing, now.Add(delay), true
	f.Attempt.Outcome, f.Attempt.Delay = task.OutcomeSnoozed, delay
	return nil
}

// SnoozeLimitError is the failure of a task that asked to snooze once
// more than its bound allows (max_snoozes in a task file,
// HandlerConfig.MaxSnoozes for a Go handler).
type SnoozeLimitError struct {
	Snoozes int // the snoozes it had
	Max     int // its bound
}

func (e *SnoozeLimitError) Error() string {
	return fmt.Sprintf("asked to snooze again after %d snoozes, the most its max_snoozes (%d) allows: what it waits for has not come (raise max_snoozes if it may take longer)",
		e.Snoozes, e.Max)
}
