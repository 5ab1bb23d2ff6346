package sqlite_test

import (
	"errors"
	"testing"

	"github.com/grit-run/grit/task"
)

// TestActSaysTheState: an action on a task in a state it does not apply
// to says which state that is.
func TestActSaysTheState(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	defer s.Close()
	ts, err := s.Enqueue(t.Context(), []task.NewTask{{Kind: "k"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []task.Action{task.ActReplay, task.ActSkip, task.ActFail} {
		_, err := s.Act(t.Context(), ts[0].ID, a)
		var se *task.StateError
		if !errors.Is(err, task.ErrWrongState) || !errors.As(err, &se) || se.State != task.Ready {
			t.Errorf("%s of a READY task: %v, want a StateError of READY", a, err)
		}
	}
}
