package decide_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/decide"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// refused is a refused connection as the net package reports it.
var refused = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

// fail decides attempt n of a task with policy pol failing with err, after
// the previous attempt failed with prev (nil: this is the first failure).
func fail(t *testing.T, pol string, n int, prev, err error) store.Finish {
	t.Helper()
	tk := task.Task{ID: 1, Kind: "charge", Policy: pol, Attempt: n}
	p, perr := decide.Policy(tk, retry.CommonFourTimes)
	if perr != nil {
		t.Fatal(perr)
	}
	if prev != nil {
		var f store.Finish
		tk.Attempt = n - 1
		decide.Failure(&f, tk, prev, p, time.Now())
		tk.Attempt, tk.Fingerprint, tk.Streak = n, f.Fingerprint, f.Streak
	}
	var f store.Finish
	decide.Failure(&f, tk, err, p, time.Now())
	return f
}

func TestFailureAppliesTheClassSchedule(t *testing.T) {
	t.Parallel()
	const pol = "5 1s 1m transient=20,2s,5m"
	bug := errors.New("KeyError: 42")
	tests := []struct {
		name     string
		n        int
		prev     error
		err      error
		state    task.State
		class    string
		decision string
	}{
		{"transient past the policy's attempts", 9, nil, retry.Transient(bug), task.Retrying, "transient", "retry"},
		{"an outage past the policy's attempts", 9, nil, fmt.Errorf("charge: %w", refused), task.Retrying, "transient", "retry"},
		{"a wrapped ErrTransient past the policy's attempts", 9, nil, fmt.Errorf("charge: %w", retry.ErrTransient), task.Retrying, "transient", "retry"},
		{"transient at its own limit", 21, nil, retry.Transient(bug), task.Failed, "transient", "exhausted"},
		{"unclassified at the policy's limit", 6, nil, bug, task.Failed, "unclassified", "exhausted"},
		{"the same outage twice is not poison", 2, refused, refused, task.Retrying, "transient", "retry"},
		{"the same bug twice is poison", 2, bug, bug, task.DeadLetter, "unclassified", "poison"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := fail(t, pol, tt.n, tt.prev, tt.err)
			if f.State != tt.state || f.Attempt.Class != tt.class || f.Attempt.Decision != tt.decision {
				t.Errorf("state %s, class %s, decision %s; want %s, %s, %s",
					f.State, f.Attempt.Class, f.Attempt.Decision, tt.state, tt.class, tt.decision)
			}
		})
	}
}

func TestFailureUnderExplicitOnly(t *testing.T) {
	t.Parallel()
	const pol = "3 1s explicit_only"
	if f := fail(t, pol, 1, nil, fmt.Errorf("call payments: %w", retry.ErrTransient)); f.State != task.Retrying {
		t.Errorf("a wrapped ErrTransient: %s (%s), want RETRYING", f.State, f.Attempt.Decision)
	}
	f := fail(t, pol, 1, nil, refused)
	if f.State != task.Failed || f.Attempt.Class != "unclassified" || f.Attempt.Decision != "permanent" {
		t.Errorf("an unmarked outage: %s, class %s, decision %s; want FAILED, unclassified, permanent: explicit-only infers nothing",
			f.State, f.Attempt.Class, f.Attempt.Decision)
	}
}

func TestSnooze(t *testing.T) {
	now := time.Now()
	tk := task.Task{ID: 1, Attempt: 1, Snoozes: 2}
	for _, tt := range []struct {
		max   int
		bound bool
	}{{0, false}, {3, false}, {2, true}, {1, true}} {
		var f store.Finish
		err := decide.Snooze(&f, tk, time.Minute, tt.max, now)
		var limit *decide.SnoozeLimitError
		switch {
		case tt.bound && (!errors.As(err, &limit) || limit.Snoozes != 2 || limit.Max != tt.max || f.State != ""):
			t.Errorf("max %d after 2 snoozes: %v, %+v; want the bound's error and nothing decided", tt.max, err, f)
		case tt.bound && !errors.Is(err, retry.ErrPermanent):
			t.Errorf("max %d: %v is not permanent", tt.max, err)
		case !tt.bound && (err != nil || f.State != task.Sensing || !f.NextAt.Equal(now.Add(time.Minute)) || !f.Refund || f.Attempt.Outcome != task.OutcomeSnoozed):
			t.Errorf("max %d after 2 snoozes: %v, %+v; want SENSING for a minute, the attempt given back", tt.max, err, f)
		}
	}
}
