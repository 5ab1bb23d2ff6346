package task

import (
	"errors"
	"fmt"
)

// Sentinel errors shared by the stores, the engine and the API.
var (
	// ErrNotFound: no task, run or worker has that id.
	ErrNotFound = errors.New("task: not found")
	// ErrLeaseLost: a write came from an attempt whose lease is no longer
	// current (the task was taken over, released or finished). The write was
	// rejected.
	ErrLeaseLost = errors.New("task: lease lost")
	// ErrWrongState: the task is not in a state that allows the operation.
	ErrWrongState = errors.New("task: wrong state")
	// ErrDuplicate: a task with that idempotency key, or a run with that
	// name, already exists.
	ErrDuplicate = errors.New("task: duplicate")
	// ErrInvalid: the request is malformed; the wrapping error says how.
	ErrInvalid = errors.New("task: invalid")
	// ErrKeyConflict: an idempotency key already names a task of other
	// work (another kind, or other args); see KeyConflictError.
	ErrKeyConflict = errors.New("task: idempotency key names other work")
	// ErrRefused: the store's database refused to write this item for
	// what it would write (a trigger raised, a constraint failed), while
	// it wrote the others of its batch; the wrapping error has the
	// database's own. Another try may succeed once the cause is gone.
	ErrRefused = errors.New("task: refused by the store")
)

// KeyConflictError is ErrKeyConflict with what a caller needs to resolve
// it: the key, the task that holds it, and what differs. errors.Is(err,
// ErrKeyConflict) matches it.
type KeyConflictError struct {
	Key      string
	Existing int64  // the id of the task that holds the key
	Kind     string // that task's kind
	Differs  string // "kind" or "args"
}

func (e *KeyConflictError) Error() string {
	return fmt.Sprintf("idempotency key %q already names task %d (kind %s) with other %s: use another key for other work, or ask for the task that holds it (return existing)",
		e.Key, e.Existing, e.Kind, e.Differs)
}
func (e *KeyConflictError) Is(target error) bool { return target == ErrKeyConflict }

// StateError is ErrWrongState with the state the task was in, so that a
// caller can say it: errors.Is(err, ErrWrongState) matches it, and
// errors.As finds the state.
type StateError struct {
	State State
}

func (e *StateError) Error() string {
	return "task is " + string(e.State) + ": " + ErrWrongState.Error()
}
func (e *StateError) Is(target error) bool { return target == ErrWrongState }
