package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/grit-run/grit/task"
)

// Awaiter is an optional capability: the results handlers set for their
// tasks (grit.SetResult), and tasks whose handlers await others
// (grit.Await) with their slot free.
//
// A task that awaits others ends its attempt SENSING with a Finish whose
// AwaitTasks names them. In that Finish's transaction the store records
// the wait, and makes the task due at once when every task it awaits has
// ended (its state Terminal: a dead letter has not, it waits for an
// operator) or does not exist. Then the end of each awaited task (by a
// Finish or an Act), in the transaction that ends it, makes the task
// that awaits it due when it was the last of them to end: fenced as the
// end is, and once however often it is asked. An Act that cancels a task
// cancels the tasks it awaits that have not ended, and theirs in turn.
type Awaiter interface {
	// SetResult keeps result as the result of a task RUNNING under
	// token (task.Task.Result), in place of any it had. A task not
	// RUNNING under token is task.ErrLeaseLost, and keeps what it had; a
	// result ValidateResult refuses is its error.
	SetResult(ctx context.Context, taskID, token int64, result json.RawMessage) error
	// Children reads the tasks of ids that exist, by id, each with its
	// state, result and last error. A missing id has no entry.
	Children(ctx context.Context, ids []int64) ([]task.Child, error)
}

// ValidateResult checks a result before it is kept.
func ValidateResult(taskID int64, result json.RawMessage) error {
	if len(result) > task.MaxResult {
		return invalid("result of task %d: %d bytes of JSON: the most a task keeps is %d; keep a reference (a key, a URL) to a large result instead",
			taskID, len(result), task.MaxResult)
	}
	if p := task.JSONProblem(result); p != "" || len(result) == 0 {
		if p == "" {
			p = "empty: want JSON (null for none)"
		}
		return invalid("result of task %d: %s", taskID, p)
	}
	return nil
}

// checkAwait rejects an item that awaits tasks it cannot: in another
// state than SENSING, awaiting a message too, or naming a task id below
// 1 or its own.
func checkAwait(f Finish) error {
	if len(f.AwaitTasks) == 0 {
		return nil
	}
	if f.State != task.Sensing || f.Awaits != "" {
		return fmt.Errorf("finish task %d: awaits tasks in state %s (awaiting a message %q): only a SENSING task awaits, and tasks or a message, not both: %w",
			f.TaskID, f.State, f.Awaits, task.ErrInvalid)
	}
	for _, id := range f.AwaitTasks {
		if id < 1 || id == f.TaskID {
			return fmt.Errorf("finish task %d: awaits task %d: want the id of another task: %w", f.TaskID, id, task.ErrInvalid)
		}
	}
	return nil
}

// Snoozed reports whether f is a snooze, counted in the task's Snoozes:
// SENSING awaiting neither a message nor tasks.
func (f Finish) Snoozed() bool {
	return f.State == task.Sensing && f.Awaits == "" && len(f.AwaitTasks) == 0
}

// EndedSQL is the states of a task that ended (task.State.Terminal), as
// an SQL list, "('SUCCESS', …)", for the drivers' statements.
var EndedSQL = endedSQL()

func endedSQL() string {
	var b strings.Builder
	for _, s := range task.States {
		if s.Terminal() {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString("'" + string(s) + "'")
		}
	}
	return "(" + b.String() + ")"
}

// EndedTasks is the tasks of the items of fs that moved (in moved, as
// Finish's statements return them) to a state that ends them: those
// whose end wakes the tasks that await them.
func EndedTasks(fs []Finish, items []int, moved map[int64]int64) []int64 {
	var out []int64
	for _, i := range items {
		if _, ok := moved[fs[i].TaskID]; ok && fs[i].State.Terminal() {
			out = append(out, fs[i].TaskID)
		}
	}
	return out
}
