package store

import (
	"context"

	"github.com/grit-run/grit/task"
)

// Stepper is part of Store: the recorded steps of tasks, kept with them
// and pruned with them.
type Stepper interface {
	// Steps lists a task's recorded steps, by Seq.
	Steps(ctx context.Context, taskID int64) ([]task.Step, error)
	// RecordStep records step s of a task RUNNING under token, and answers
	// it as recorded; an error matching task.ErrLeaseLost when the task is
	// not. A step already recorded at s.Seq is answered as it was recorded,
	// whatever s holds (the caller compares): recording is idempotent.
	RecordStep(ctx context.Context, taskID, token int64, s task.Step) (task.Step, error)
}

// ValidateStep checks a step before it is recorded.
func ValidateStep(s task.Step) error {
	switch {
	case s.Seq < 1 || s.Occurrence < 1 || s.Attempt < 1:
		return invalid("step %q: seq %d, occurrence %d, attempt %d: want each 1 or more", s.Name, s.Seq, s.Occurrence, s.Attempt)
	case s.Name == "" || len(s.Name) > 200:
		return invalid("step %q: want a name of 1 to 200 characters", s.Name)
	case len(s.Result) > task.MaxStepResult:
		return invalid("step %q: a result of %d bytes: the most a step records is %d; record a reference (a key, a URL) to a large result instead", s.Name, len(s.Result), task.MaxStepResult)
	}
	if p := task.JSONProblem(s.Result); p != "" {
		return invalid("step %q: result: %s", s.Name, p)
	}
	return nil
}

// StepsOf groups steps by the attempt that recorded them.
func StepsOf(steps []task.Step) map[int][]task.Step {
	out := map[int][]task.Step{}
	for _, s := range steps {
		out[s.Attempt] = append(out[s.Attempt], s)
	}
	return out
}
