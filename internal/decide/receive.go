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
	f.Awaits = topic
	wait(f, until, now, fmt.Sprintf("wait for a message on %q", topic))
}

// Await decides what an attempt that waits for the tasks ids to end leads
// to: SENSING, awaiting them (the last of them to end makes it due at
// once), until a time at which it looks again whatever happened, its
// attempt given back. Like a receive, it is no snooze.
func Await(f *store.Finish, ids []int64, until, now time.Time) {
	f.AwaitTasks = ids
	wait(f, until, now, fmt.Sprintf("wait for %d awaited tasks to end", len(ids)))
}

// wait is the part of a wait's decision every wait shares.
func wait(f *store.Finish, until, now time.Time, what string) {
	f.State, f.NextAt, f.Refund = task.Sensing, until, true
	f.Attempt.Outcome, f.Attempt.Delay = task.OutcomeSnoozed, max(until.Sub(now), 0)
	f.Attempt.Decision = fmt.Sprintf("%s, at most %s", what, retry.FormatDuration(f.Attempt.Delay))
}
