package store

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/grit-run/grit/task"
)

// Tasks are the tasks of Enqueue's answers.
func Tasks(es []task.Enqueued) []task.Task {
	out := make([]task.Task, len(es))
	for i, e := range es {
		out[i] = e.Task
	}
	return out
}

// KeyConflict is the one rule for an idempotency key that is taken:
// nil when n asks for the work the task holding the key does (the same
// kind, and args equal as JSON values: key order and spacing aside,
// numbers by their text), or when n accepts the existing task whatever it
// is (ReturnExisting); a *task.KeyConflictError otherwise. Both stores
// apply it, to keys taken before the call and within it.
func KeyConflict(existing task.Task, n task.NewTask) error {
	if n.ReturnExisting {
		return nil
	}
	differs := ""
	switch {
	case existing.Kind != n.Kind:
		differs = "kind"
	case !SameJSON(existing.Args, n.Args):
		differs = "args"
	default:
		return nil
	}
	return &task.KeyConflictError{Key: n.IdempotencyKey, Existing: existing.ID, Kind: existing.Kind, Differs: differs}
}

// SameJSON reports whether a and b are the same JSON value; empty and
// null are the same (no args).
func SameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	va, oka := decodeJSON(a)
	vb, okb := decodeJSON(b)
	return oka && okb && reflect.DeepEqual(va, vb)
}

func decodeJSON(b []byte) (any, bool) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, true
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		return nil, false
	}
	return v, true
}
