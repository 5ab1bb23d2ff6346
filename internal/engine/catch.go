package engine

import (
	"encoding/json"
	"fmt"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Caught is the args of a catch task: the task that ended FAILED, its kind
// and args, its last error and the attempts it used.
type Caught struct {
	Task     int64           `json:"task"`
	Kind     string          `json:"kind"`
	Args     json.RawMessage `json:"args"`
	Error    string          `json:"error"`
	Attempts int             `json:"attempts"`
}

// CatchKey is the idempotency key of the catch task of task id, failed
// by its attempt under lease token: one catch task per failure, whoever
// records it and however often; a task an operator retries that fails
// again is caught again (its new attempt has a new token).
func CatchKey(id, token int64) string { return fmt.Sprintf("catch:%d:%d", id, token) }

// withCatch adds to f, the end of an attempt of t, the catch task of t's
// handler when f fails t: retries ran out or the failure was permanent.
// The store inserts it in the transaction that records f, only if f
// applies. A DEAD_LETTER waits for an operator and is not caught; an
// operator's ActFail is not the engine's decision and is not caught either.
func (e *Engine) withCatch(t task.Task, f *store.Finish) {
	if f.State != task.Failed {
		return
	}
	h, ok := e.handlers[t.Kind]
	if !ok || h.Catch == "" {
		return
	}
	n := catchTask(t, f.Token, f.Error, h.Catch)
	if ch, ok := e.handlers[h.Catch]; ok {
		n.Group = ch.Group // as grit.Client.Enqueue would put it
	}
	f.Enqueue = append(f.Enqueue[:0:0], n)
}

func catchTask(t task.Task, token int64, errText string, kind string) store.NewTask {
	args := json.RawMessage(t.Args)
	if len(args) == 0 || !json.Valid(args) {
		args, _ = json.Marshal(string(t.Args)) // not JSON: kept as a string
		if len(t.Args) == 0 {
			args = json.RawMessage("null")
		}
	}
	b, _ := json.Marshal(Caught{Task: t.ID, Kind: t.Kind, Args: args, Error: errText, Attempts: t.Attempt})
	return store.NewTask{Kind: kind, Args: b, Queue: t.Queue, Tenant: t.Tenant, IdempotencyKey: CatchKey(t.ID, token)}
}
