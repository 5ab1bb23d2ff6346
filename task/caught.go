package task

import "encoding/json"

// Caught is the args of a catch task (grit.HandlerConfig.Catch), as JSON:
//
//	{"task": 42, "kind": "charge_card", "args": {...}, "error": "...", "attempts": 5}
//
// Task is the id of the task that ended FAILED, Kind and Args its own,
// Error its last error and Attempts the attempts it used. A catch handler
// takes it as its args: grit.Handle(c, "refund", func(ctx context.Context,
// c task.Caught) error {...}, grit.HandlerConfig{}). The catch task is in
// the failed task's queue and tenant, outside any run, under the
// idempotency key catch:ID:TOKEN (the failed task's id and the lease token
// of the attempt that failed it): one per failure.
type Caught struct {
	Task     int64           `json:"task"`
	Kind     string          `json:"kind"`
	Args     json.RawMessage `json:"args"`
	Error    string          `json:"error"`
	Attempts int             `json:"attempts"`
}
