package task

import (
	"encoding/json"
	"fmt"
)

// MaxResult bounds the result a handler sets for its task
// (grit.SetResult), in bytes of JSON: as a step's (MaxStepResult), so
// that a result read back into a step fits. Keep a reference (a key, a
// URL) to a larger one.
const MaxResult = MaxStepResult

// Child is a task awaited by another's handler (grit.Await), as it
// ended: its state (Terminal), its result and its last error.
type Child struct {
	ID    int64 `json:"id"`
	State State `json:"state"`
	// Result is what its handler set (grit.SetResult), JSON; nil for
	// none.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is its last attempt's error ("" when it succeeded).
	Error string `json:"error,omitempty"`
}

// Decode decodes the child's result into v. A child that set none
// decodes as JSON null does: v is left as it was.
func (c Child) Decode(v any) error {
	if len(c.Result) == 0 {
		return nil
	}
	if err := json.Unmarshal(c.Result, v); err != nil {
		return fmt.Errorf("task %d: its result %.100s does not decode into %T: %w", c.ID, c.Result, v, err)
	}
	return nil
}

// Awaited is what an await (grit.Await) records as a step once every
// task it awaits has ended: them, in the order awaited, so that a
// retried attempt answers the same without waiting again.
type Awaited struct {
	Children []Child `json:"children"`
}
