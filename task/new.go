package task

import (
	"encoding/json"
	"time"
)

// NewTask is a task to insert.
type NewTask struct {
	Name           string
	Kind           string
	Args           json.RawMessage
	Queue          string // "" is "default"
	Group          string
	Tenant         string // whose work it is ("" for none), for per-tenant limits
	Priority       int
	Policy         string
	PoisonAfter    int
	Timeout        time.Duration
	Grace          time.Duration
	RunAt          time.Time // zero: now
	IdempotencyKey string
	// ReturnExisting answers the task that holds IdempotencyKey even when
	// it is other work (another kind or other args), instead of failing
	// with a *KeyConflictError.
	ReturnExisting bool
	Needs          []string // names of tasks of the same run; only in SubmitRun
	// Trace is the W3C traceparent of the span that enqueues the task
	// ("" for none), kept as the task's Trace.
	Trace string
	// Origin is where the task came from, kept as the task's Origin:
	// OriginAPI, FileOrigin(host), or "" for code with the store's own
	// credentials.
	Origin string
}

// NewRun is a run to insert: a DAG of named tasks.
type NewRun struct {
	Name        string
	Key         string // idempotency key; "" for none
	MaxFailures int    // 0: no limit
	Tasks       []NewTask
}

// Enqueued is a task as Client.Enqueue and the store answer it: the task the call created, or
// (Existed) the task that already held its idempotency key.
type Enqueued struct {
	Task
	Existed bool
}
