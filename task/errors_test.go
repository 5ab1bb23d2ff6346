package task_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/grit-run/grit/task"
)

func TestStateError(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("skip task 8: %w", &task.StateError{State: task.Success})
	var se *task.StateError
	if !errors.Is(err, task.ErrWrongState) || !errors.As(err, &se) || se.State != task.Success {
		t.Errorf("%v: want ErrWrongState with the state SUCCESS", err)
	}
	if err.Error() != "skip task 8: task is SUCCESS: task: wrong state" {
		t.Errorf("message %q", err)
	}
}
