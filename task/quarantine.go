package task

import (
	"encoding/json"
	"time"
)

// Quarantined is an item a handler set aside with grit.Quarantine (one
// bad row of many), while its task went on: kept with its error until an
// operator replays it, as a task of its ReplayKind, or drops it.
type Quarantined struct {
	ID     int64 `json:"id"`
	TaskID int64 `json:"task_id"`
	// Queue and Kind are the quarantining task's; Attempt the attempt
	// that set the item aside first.
	Queue   string `json:"queue"`
	Kind    string `json:"kind"`
	Attempt int    `json:"attempt"`
	// ReplayKind is the kind a replay runs the item as (the handler's
	// HandlerConfig.Quarantine.Kind); "" when the handler names none, and
	// the item cannot be replayed.
	ReplayKind string `json:"replay_kind,omitempty"`
	// Item is the item, as JSON: a replay's task has it as its args.
	Item json.RawMessage `json:"item"`
	// Error and Fingerprint are the item's error and its fingerprint (as
	// a task's failure's: its type and its message, numbers and ids
	// masked), which groups items that failed alike.
	Error       string    `json:"error"`
	Fingerprint string    `json:"fingerprint"`
	CreatedAt   time.Time `json:"created_at"`
}

// MaxQuarantinedItem bounds a quarantined item, in bytes of JSON: set
// aside a reference (a key, a line number) to a larger one.
const MaxQuarantinedItem = 256 << 10

// QuarantineFilter selects quarantined items, oldest first.
type QuarantineFilter struct {
	IDs         []int64 // these only
	TaskID      int64   // a task's only
	Fingerprint string  // a fingerprint's only
	AfterID     int64   // those after it: the next page
	Limit       int     // at most; 0: no bound
}
