package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/grit-run/grit/task"
)

// InstanceRow is a state machine's instance as the store keeps it: its
// state, opaque to the store, written by the instance's machine's workers
// (package fsm).
type InstanceRow struct {
	Machine, Key string
	State        json.RawMessage
	// Due is when a worker next has work on it (an event to deliver, a
	// state's task to look at); zero: none.
	Due     time.Time
	Version int64 // 1 when made, one more at each write
	Updated time.Time
}

// InstanceWrite is a write of one instance, made only if no other write
// came first, with the tasks it enqueues, as a ScheduleWrite is.
type InstanceWrite struct {
	Machine, Key string
	// Version is the version the writer read; 0 makes an instance that
	// must not exist.
	Version int64
	Tasks   []task.NewTask
	// Then is called in the transaction with the tasks as Enqueue answers
	// them, and returns the new state and due time; it may be called again
	// when the transaction is retried.
	Then func(enqueued []task.Enqueued) (state json.RawMessage, due time.Time, err error)
}

// InstanceFilter selects instances, by machine then key.
type InstanceFilter struct {
	Machine  string    // "" for every machine
	DueBy    time.Time // zero: due or not
	AfterKey string    // keyset: keys above it (with Machine set)
	Limit    int       // 0: DefaultInstanceLimit
}

// DefaultInstanceLimit is how many instances a filter without a Limit
// lists.
const DefaultInstanceLimit = 100

// LimitOrDefault is f's Limit, or DefaultInstanceLimit when it has none:
// the one rule both drivers list by.
func (f InstanceFilter) LimitOrDefault() int {
	if f.Limit <= 0 {
		return DefaultInstanceLimit
	}
	return f.Limit
}

// Machines is an optional capability: the instances of state machines,
// kept in the store so that every worker of a fleet delivers their events
// in order, one state at a time.
type Machines interface {
	// GetInstance returns one instance, or an error matching ErrNotFound.
	GetInstance(ctx context.Context, machine, key string) (InstanceRow, error)
	// Instances lists instances by machine, then key.
	Instances(ctx context.Context, f InstanceFilter) ([]InstanceRow, error)
	// WriteInstance writes w in one transaction with its tasks, if the
	// instance is still at w.Version (or, for 0, does not exist). ok is
	// false, and nothing is written, when another write came first.
	WriteInstance(ctx context.Context, w InstanceWrite) (row InstanceRow, ok bool, err error)
}

// ValidateInstanceWrite checks a write before its transaction.
func ValidateInstanceWrite(w InstanceWrite) error {
	switch {
	case w.Machine == "" || len(w.Machine) > 200:
		return invalid("machine %q: want a name of 1 to 200 characters", w.Machine)
	case w.Key == "" || len(w.Key) > 500:
		return invalid("instance %q of machine %q: want a key of 1 to 500 characters", w.Key, w.Machine)
	case w.Version < 0:
		return invalid("instance %q: version %d", w.Key, w.Version)
	case w.Then == nil:
		return invalid("instance %q: no state to write", w.Key)
	}
	for i, t := range w.Tasks {
		if len(t.Needs) > 0 {
			return invalid("instance %q: task %d: needs are only for tasks of a run", w.Key, i)
		}
		if err := t.Validate(); err != nil {
			return err
		}
	}
	return nil
}
