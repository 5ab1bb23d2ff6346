package store

import (
	"context"
	"encoding/json"

	"time"
)

// MaxStepResult bounds a step's recorded result, in bytes of JSON.
const MaxStepResult = 1 << 20

// Step is a step of a task's handler whose result is recorded: on a later
// attempt of the task, the step answers its result without running.
type Step struct {
	// Seq is the step's place in the order the task's handler reaches its
	// steps, from 1.
	Seq int `json:"seq"`
	// Name and Occurrence identify it: the Occurrence-th step of that
	// name the handler reached, from 1.
	Name       string          `json:"name"`
	Occurrence int             `json:"occurrence"`
	Attempt    int             `json:"attempt"` // the attempt that ran it
	Result     json.RawMessage `json:"result"`
	RecordedAt time.Time       `json:"recorded_at"` // the store's time
}

// Stepper is an optional capability: the recorded steps of tasks, kept
// with them and pruned with them.
type Stepper interface {
	// Steps lists a task's recorded steps, by Seq.
	Steps(ctx context.Context, taskID int64) ([]Step, error)
	// RecordStep records step s of a task RUNNING under token, and answers
	// it as recorded; an error matching task.ErrLeaseLost when the task is
	// not. A step already recorded at s.Seq is answered as it was recorded,
	// whatever s holds (the caller compares): recording is idempotent.
	RecordStep(ctx context.Context, taskID, token int64, s Step) (Step, error)
}

// ValidateStep checks a step before it is recorded.
func ValidateStep(s Step) error {
	switch {
	case s.Seq < 1 || s.Occurrence < 1 || s.Attempt < 1:
		return invalid("step %q: seq %d, occurrence %d, attempt %d: want each 1 or more", s.Name, s.Seq, s.Occurrence, s.Attempt)
	case s.Name == "" || len(s.Name) > 200:
		return invalid("step %q: want a name of 1 to 200 characters", s.Name)
	case len(s.Result) > MaxStepResult:
		return invalid("step %q: a result of %d bytes: the most a step records is %d; record a reference (a key, a URL) to a large result instead", s.Name, len(s.Result), MaxStepResult)
	}
	if p := JSONProblem(s.Result); p != "" {
		return invalid("step %q: result: %s", s.Name, p)
	}
	return nil
}

// StepsOf groups steps by the attempt that recorded them.
func StepsOf(steps []Step) map[int][]Step {
	out := map[int][]Step{}
	for _, s := range steps {
		out[s.Attempt] = append(out[s.Attempt], s)
	}
	return out
}
