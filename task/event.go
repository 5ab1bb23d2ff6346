package task

import "encoding/json"

// Event is a message published to a topic: every subscriber of the topic
// gets a delivery, a task of the subscriber's kind in its queue whose args
// are the payload. A delivery is an ordinary task: it is retried,
// dead-lettered and leased like any other.
type Event struct {
	Topic   string
	Payload json.RawMessage
	// Key makes publishing idempotent: an event published again with the
	// same key delivers nothing new to a subscriber that has it already.
	Key string
	// Tenant is whose event it is: its deliveries belong to the tenant.
	Tenant string
}

// Subscription turns a topic's events into tasks of Kind in Queue
// ("" is "default") and Group (the downstream they call, for its breaker
// and pressure). A topic has one subscription per kind and queue.
type Subscription struct {
	Topic string `json:"topic"`
	Kind  string `json:"kind"`
	Queue string `json:"queue"`
	Group string `json:"group,omitempty"`
}
