package grit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// AwaitRecheck is how long a task that awaits others (Await) waits at
// most before its handler looks at them again: the end of the last of
// them wakes it at once; this bounds a wait for ends that wake nothing
// (a task of a run that its run's propagation ended).
const AwaitRecheck = engine.AwaitRecheck

// SetResult records v, as its JSON, as the result of the handler's task:
// kept on the task (task.Task.Result: grit task shows it, the API's Task
// holds it) and answered to a handler that awaits the task (Await). A
// retried attempt may set it again: the last one set wins, and an
// attempt that lost its lease cannot set it (an error matching
// task.ErrLeaseLost). A result is at most task.MaxResult (1 MiB) of
// JSON: a larger one, or one that does not encode, is an error that
// fails the task permanently when the handler returns it; keep a
// reference (a key, a URL) to a large result instead.
func SetResult(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return retry.Permanent(fmt.Errorf("grit: set result: a %T does not encode as JSON: %w", v, err))
	}
	if len(b) > task.MaxResult {
		return retry.Permanent(fmt.Errorf("grit: set result: %d bytes of JSON, past the %d a task keeps: keep a reference (a key, a URL) to a large result instead", len(b), task.MaxResult))
	}
	return engine.SetResult(ctx, b)
}

// ChildKey is an idempotency key for a task the handler enqueues, named
// name, derived from the handler's own task: the same on every attempt
// of the task, and another task's for another task. Enqueued with it
// (WithKey), a child is enqueued once, whatever the retries of its
// parent: a retry's enqueue answers the task the first attempt enqueued
// (task.Enqueued.Existed), so the parent can Await the same ids. Name
// each child by what it is (its index, the key of its input), the same
// on every attempt. With a context that is not a handler's it is "", no
// key: there is no task to derive it from.
func ChildKey(ctx context.Context, name string) string {
	a, ok := engine.AttemptFrom(ctx)
	if !ok {
		return ""
	}
	return fmt.Sprintf("grit:child:%d:%s", a.TaskID, name)
}

// Await waits until every task of ids has ended (its state one of
// task.State.Terminal's: SUCCESS, FAILED, UPSTREAM_FAILED, SKIPPED or
// CANCELLED; a dead letter has not, it waits for an operator to replay,
// skip or fail it), and answers them in the order given, each with its
// state, its result (SetResult; task.Child.Decode reads it) and its last
// error. A child that failed is answered, not returned as Await's error:
// the handler decides.
//
// While it waits the task holds no slot and uses no attempt: Await
// returns an error, which the handler must return as it is (if err !=
// nil { return err }); the attempt ends, the task is SENSING, and the end
// of the last of the tasks makes it due at once (in the store's
// transaction that ends it), or AwaitRecheck at the latest. It runs
// again from its start; its steps replay, and Await answers.
//
// An await is a durable step (see Step): once the tasks have ended, what
// it answers is recorded with the task, so a retried attempt answers the
// same without waiting. So an await, like a step, must come at the same
// place on every attempt, with the same ids: enqueue the tasks with
// ChildKey keys. Cancelling the task (grit cancel) cancels the tasks it
// awaits that have not ended. An id that is no task is an error that
// fails the task permanently; so is an answer larger than a step
// records (task.MaxStepResult): await fewer at a time. A handler that
// runs isolated (HandlerConfig.Isolate) cannot await yet.
func Await(ctx context.Context, ids ...int64) ([]task.Child, error) {
	return engine.Await(ctx, ids)
}
