package fsm

import (
	"encoding/json"
	"time"
)

// Instance is a machine's instance: the state it is in, the transition
// under way, the events waiting and the history of those delivered, as
// the store keeps it.
type Instance struct {
	// State is the state the instance is in.
	State string `json:"state"`
	// Entering is the transition under way: its state's task has not
	// ended; nil when none.
	Entering *Entering `json:"entering,omitempty"`
	// Held is set when Entering's task is a dead letter: the instance
	// waits for an operator to replay, skip or fail it.
	Held bool `json:"held,omitempty"`
	// Queue are the events waiting, in the order sent.
	Queue []Event `json:"queue,omitempty"`
	// History are the latest events' ends, oldest first.
	History []Entry `json:"history,omitempty"`
	// Sent counts the events sent to the instance: the next is Sent+1.
	Sent int64 `json:"sent"`
}

// Event is an event sent to an instance.
type Event struct {
	Seq     int64           `json:"seq"`
	Event   string          `json:"event"`
	Payload json.RawMessage `json:"payload,omitempty"`
	At      time.Time       `json:"at"`
}

// Entering is a transition under way.
type Entering struct {
	Event
	From string `json:"from"`
	To   string `json:"to"`
	Task int64  `json:"task"`
	// Next is the event the state's handler asked for (grit.Next): it is
	// delivered first once the handler has succeeded.
	Next *Event `json:"next,omitempty"`
}

// Entry is how an event ended.
type Entry struct {
	Seq   int64  `json:"seq"`
	Event string `json:"event"`
	From  string `json:"from"`
	To    string `json:"to"` // the state entered; "" when ignored
	Task  int64  `json:"task,omitempty"`
	// Outcome: ENTERED (its handler succeeded, or it had none), FAILED
	// (its handler failed for good: the instance went to the machine's
	// Failed state), IGNORED (no transition from the state on the event).
	Outcome string    `json:"outcome"`
	Why     string    `json:"why,omitempty"`
	At      time.Time `json:"at"`
}

// The outcomes of an Entry.
const (
	Entered = "ENTERED"
	Failed  = "FAILED"
	Ignored = "IGNORED"
)
