package store

import (
	"fmt"

	"github.com/grit-run/grit/task"
)

// Finishable reports whether Finish may move a task to state s.
func Finishable(s task.State) bool {
	switch s {
	case task.Success, task.Failed, task.DeadLetter, task.Retrying, task.Sensing, task.Ready:
		return true
	}
	return false
}

// CheckFinishes is the part of Finish every driver shares: an item with a
// state Finish cannot set gets task.ErrInvalid in errs; todo lists the
// others, for the driver to apply.
func CheckFinishes(fs []Finish) (errs []error, todo []int) {
	errs = make([]error, len(fs))
	for i, f := range fs {
		if !Finishable(f.State) {
			errs[i] = fmt.Errorf("finish task %d: state %q: want SUCCESS, FAILED, DEAD_LETTER, RETRYING, SENSING or READY: %w", f.TaskID, f.State, task.ErrInvalid)
			continue
		}
		todo = append(todo, i)
	}
	return errs, todo
}
