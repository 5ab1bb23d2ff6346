package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// Handler works the tasks of one kind.
type Handler struct {
	Kind string
	// Fn does the work. Its context carries the attempt's deadline and
	// Attempt information (see AttemptFrom); it ends when the attempt is
	// cut off, released or its lease is lost.
	Fn func(ctx context.Context, t *task.Task) error
	// Policy is the retry policy of tasks of this kind that do not carry
	// their own; nil means retry.CommonFourTimes.
	Policy *retry.Policy
	// Timeout bounds each attempt when the task sets none; 0 is no bound,
	// task.AutoTimeout a bound learned from the kind's successful runs.
	Timeout time.Duration
	// Group names the downstream the tasks call.
	Group string
	// Catch, if set, is the kind of the task enqueued, with a Caught as
	// its args, when this engine records a task of this kind ending
	// FAILED: in the same store transaction, under the key CatchKey (the task's id and its failed attempt's token).
	Catch string
	// Isolate runs the attempts in child processes (isolate.go), so that
	// a handler that hangs is killed with its process, and one that
	// crashes takes only its own attempt with it.
	Isolate bool
	// MaxSnoozes bounds the snoozes of a task of this kind: asked for
	// once more, the snooze fails the task (decide.Snooze). 0 is no
	// bound. A SnoozeError's own Max wins over it.
	MaxSnoozes int
	// Quarantine is what the handler does with the items it sets aside
	// (Quarantine): the kind a replay runs each as, and how many it
	// tolerates.
	Quarantine QuarantinePolicy
}

func (h *Handler) validate() error {
	if h.Kind == "" {
		return fmt.Errorf("engine: handler without a kind")
	}
	if h.Fn == nil {
		return fmt.Errorf("engine: handler %q without a function", h.Kind)
	}
	if h.Catch == h.Kind {
		return fmt.Errorf("engine: handler %q is its own catch: a catch task that fails would enqueue another, without end; name another kind", h.Kind)
	}
	if err := h.Quarantine.validate(h.Kind); err != nil {
		return err
	}
	if h.Timeout < 0 && h.Timeout != task.AutoTimeout {
		return fmt.Errorf("engine: handler %q: negative timeout %v", h.Kind, h.Timeout)
	}
	if h.MaxSnoozes < 0 {
		return fmt.Errorf("engine: handler %q: negative MaxSnoozes %d: want 0 for no bound, or the most snoozes a task may take", h.Kind, h.MaxSnoozes)
	}
	return nil
}

// HandlerAttempt is what a handler's context carries about its attempt.
type HandlerAttempt struct {
	TaskID     int64
	Number     int   // from 1
	LeaseToken int64 // a fencing token: unique in the store, larger for every new owner of a task
	Worker     string
	// Timeout is the attempt's (0: none), and TimeoutSource where it came
	// from: "task", "handler" or how an auto timeout was chosen.
	Timeout       time.Duration
	TimeoutSource string
	// Snoozes is how many times the task snoozed before (grit.Snooze):
	// a sensor's attempt number stays the same, and this counts its looks.
	Snoozes int
}

type attemptKey struct{}

// AttemptFrom returns the attempt a handler's context belongs to.
func AttemptFrom(ctx context.Context) (HandlerAttempt, bool) {
	a, ok := ctx.Value(attemptKey{}).(*HandlerAttempt)
	if !ok {
		return HandlerAttempt{}, false
	}
	return *a, true
}

// SnoozeError asks for the task to be tried again after Delay without using
// an attempt: a sensor whose condition does not hold yet. Max, when set,
// bounds the task's snoozes in place of its handler's MaxSnoozes: a
// process task carries its own (task.Exec.MaxSnoozes).
type SnoozeError struct {
	Delay time.Duration
	Max   int
}

func (e *SnoozeError) Error() string { return fmt.Sprintf("snooze %s", retry.FormatDuration(e.Delay)) }

// Snooze returns a SnoozeError.
func Snooze(d time.Duration) error { return &SnoozeError{Delay: max(d, 0)} }
