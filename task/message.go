package task

import (
	"encoding/json"
	"time"
)

// MaxMessage bounds a message's payload, in bytes of JSON: a message
// received is recorded as a step (MaxStepResult) with its topic and
// time, so a payload leaves room for those. Send a reference (a key, a
// URL) to a larger one.
const MaxMessage = 512 << 10

// MaxTopic bounds a message's topic, in bytes.
const MaxTopic = 100

// Message is a message sent to a task (Client.SendToTask, grit send),
// kept until a handler of the task receives it (grit.Receive), oldest
// first among those of its topic, or until its task is pruned.
type Message struct {
	ID      int64           `json:"id"` // larger for every message sent, in the store
	TaskID  int64           `json:"task_id"`
	Topic   string          `json:"topic"`
	Payload json.RawMessage `json:"payload"`
	SentAt  time.Time       `json:"sent_at"` // the store's time
}

// Received is what a receive (grit.Receive) records as a step: the
// message it took, or that it timed out. A retried attempt answers it
// from the record, so it neither waits nor takes a message again.
type Received struct {
	Message *Message `json:"message,omitempty"`
	Timeout bool     `json:"timeout,omitempty"`
}

// ReceiveDeadline is what a receive records as a step when the handler
// first reaches it, before it looks for a message: the time it waits
// until, so that every attempt waits for the same deadline, and its
// records come in the same order whether or not a message was there.
type ReceiveDeadline struct {
	Topic string    `json:"topic"`
	Until time.Time `json:"until"`
}
