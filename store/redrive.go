package store

import (
	"fmt"

	"github.com/grit-run/grit/task"
)

// RedriveRefusal is the error of a redrive of run id refused for the
// run's state: one that has not ended, one that succeeded, or (nothing
// set) one whose unsuccessful tasks were all cancelled by an operator.
// It says why and what to do (a driver prefixes it with the run), and
// unwraps to a *task.StateError with the run's state
// (task.ErrWrongState).
func RedriveRefusal(id int64, state task.State, nothing bool) error {
	var why string
	switch {
	case state == task.Running:
		why = fmt.Sprintf("it is RUNNING: only a run that has ended can be redriven (grit wait %d waits for its end; a DEAD_LETTER task keeps its run running until it is replayed, skipped or failed: grit dlq)", id)
	case state == task.Success:
		why = "it succeeded: there is nothing to redrive"
	case nothing:
		why = fmt.Sprintf("it is %s, but none of its tasks failed or was cancelled by the run: an operator cancelled them, and a redrive does not undo that (submit the run again to start it anew)", state)
	default:
		why = fmt.Sprintf("it is %s", state)
	}
	return &redriveRefused{why: why, state: &task.StateError{State: state}}
}

type redriveRefused struct {
	why   string
	state *task.StateError
}

func (e *redriveRefused) Error() string { return e.why }
func (e *redriveRefused) Unwrap() error { return e.state }
