package decide

import (
	"fmt"
	"time"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Receive decides what an attempt that waits for a message of topic
// until a time leads to: SENSING until then, awaiting the topic (a
// message sent makes it due at once), its attempt given back (f.Refund).
// It is no snooze: the store does not count it in the task's Snoozes,
// and no MaxSnoozes bounds it; the receive's own timeout does.
func Receive(f *store.Finish, topic string, until, now time.Time) {
	f.State, f.NextAt, f.Refund, f.Awaits = task.Sensing, until, true, topic
	f.Attempt.Outcome, f.Attempt.Delay = task.OutcomeSnoozed, max(until.Sub(now), 0)
	f.Attempt.Decision = fmt.Sprintf("wait for a message on %q, at most %s", topic, retry.FormatDuration(f.Attempt.Delay))
}
