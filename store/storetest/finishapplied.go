package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func init() {
	finishTests["AppliedIsWhatTheStoreWrites"] = finishApplied
}

// finishApplied: store.Finish.Applied, which the API server answers
// instead of reading a task again, is the task as the driver writes it,
// for every kind of end: a success, a failure, a retry at a time, a
// snooze that refunds its attempt, a deferral, a waiting state without a
// time (due at once).
func finishApplied(t *testing.T, h *harness) {
	at := h.now().Add(time.Hour + 1234567*time.Nanosecond)
	ends := []store.Finish{
		{State: task.Success, Attempt: task.Attempt{Outcome: task.OutcomeSuccess}},
		{State: task.Failed, Error: "boom", Fingerprint: "f1", Streak: 1, Attempt: task.Attempt{Outcome: task.OutcomeError}},
		{State: task.Retrying, NextAt: at, Error: "slow", Fingerprint: "f2", Streak: 2, PrevDelay: 1500 * time.Millisecond,
			Trace: "00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01", Attempt: task.Attempt{Outcome: task.OutcomeError}},
		{State: task.Sensing, NextAt: at, Refund: true, Attempt: task.Attempt{Outcome: task.OutcomeSnoozed}},
		{State: task.Retrying, NextAt: at, Refund: true, Deferred: true, Attempt: task.Attempt{Outcome: task.OutcomeError}},
		{State: task.Ready, Refund: true, Attempt: task.Attempt{Outcome: task.OutcomeReleased}},
	}
	held := make([]task.Task, len(ends))
	for i := range ends {
		kind := fmt.Sprintf("applied%d", i)
		h.enqueue(task.NewTask{Kind: kind, Args: []byte(`{"n": 1}`), Queue: "q", Group: "g", Tenant: "acme"})
		held[i] = h.take(kind)
		ends[i].TaskID, ends[i].Token = held[i].ID, held[i].LeaseToken
	}
	before := h.now()
	for i, err := range h.finish(ends...) {
		if err != nil {
			t.Fatalf("finish %d (%s): %v", i, ends[i].State, err)
		}
	}
	after := h.now()
	for i, f := range ends {
		got := h.get(f.TaskID)
		want := f.Applied(held[i], before)
		// The driver wrote at its own moment, between before and after.
		for _, p := range []struct{ got, want *time.Time }{{&got.FinishedAt, &want.FinishedAt}, {&got.NextAt, &want.NextAt}} {
			if p.want.Equal(before.Truncate(time.Microsecond)) && !p.got.Before(before.Truncate(time.Microsecond)) && !p.got.After(after) {
				*p.want = *p.got
			}
		}
		if f.State == task.Success {
			want.AttemptTrace = got.AttemptTrace // a store may leave a success's unwritten
		}
		want.Args = got.Args // the driver's JSON text; the rest is compared as written
		if g, w := fmt.Sprintf("%+v", utc(got)), fmt.Sprintf("%+v", utc(want)); g != w {
			t.Errorf("%s: the store holds\n%s\nApplied says\n%s", f.State, g, w)
		}
	}
}

// utc is t with its times in UTC, to compare them as text.
func utc(t task.Task) task.Task {
	for _, p := range []*time.Time{&t.NextAt, &t.LeaseExpires, &t.CreatedAt, &t.FirstStartedAt, &t.FinishedAt} {
		if !p.IsZero() {
			*p = p.UTC()
		}
	}
	return t
}
