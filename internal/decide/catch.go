package decide

import (
	"encoding/json"
	"fmt"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// CatchKey is the idempotency key of the catch task of task id, failed
// by its attempt under lease token: one catch task per failure, whoever
// records it and however often; a task an operator retries that fails
// again is caught again (its new attempt has a new token).
func CatchKey(id, token int64) string { return fmt.Sprintf("catch:%d:%d", id, token) }

// Catch adds to f, the end of an attempt of t, a task of kind catch when
// f fails t (its retries ran out, or the failure was permanent): the
// store inserts it in the transaction that records f, only if f applies.
// A DEAD_LETTER waits for an operator and is not caught. Both claimers
// call it: the engine for Go handlers (HandlerConfig.Catch), the API
// server for remote workers (FailRequest.catch).
func Catch(t task.Task, f *store.Finish, catch, group string) {
	if f.State != task.Failed || catch == "" {
		return
	}
	args := json.RawMessage(t.Args)
	if len(args) == 0 || !json.Valid(args) {
		args, _ = json.Marshal(string(t.Args)) // not JSON: kept as a string
		if len(t.Args) == 0 {
			args = json.RawMessage("null")
		}
	}
	b, _ := json.Marshal(task.Caught{Task: t.ID, Kind: t.Kind, Args: args, Error: f.Error, Attempts: t.Attempt})
	f.Enqueue = append(f.Enqueue[:0:0], task.NewTask{Kind: catch, Args: b, Queue: t.Queue, Tenant: t.Tenant, Group: group,
		IdempotencyKey: CatchKey(t.ID, f.Token)})
}
