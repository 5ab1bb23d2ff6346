package task

import (
	"encoding/json"
	"time"
)

// MaxStepResult bounds a step's recorded result, in bytes of JSON: record
// a reference (a key, a URL) to a larger one.
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
