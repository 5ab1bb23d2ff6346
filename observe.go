package grit

import (
	"time"

	"github.com/grit-run/grit/task"
)

// Metrics is what a client counts into as it works (Config.Metrics).
// metrics.New makes one that counts into a Prometheus registry, with the
// store's gauges (docs/observability.md lists its series); implement it
// yourself to count into something else. The root does not link
// Prometheus: a program that passes no metrics.New does not either.
//
// A Metrics that also has a method RateHeld(scope string, n int) is told
// of the claimed tasks given back to wait for a rate, by the rate's scope
// (queue, kind, group or tenant); metrics.New's has.
//
// Its methods are called on the hot path from many goroutines: they must
// be quick and safe for concurrent use.
type Metrics interface {
	// Enqueued is told of tasks enqueued, those an idempotency key
	// answered (Existed) among them.
	Enqueued(ts []task.Enqueued)
	// Started is told of tasks claimed, at now on the store's clock (a
	// task's NextAt is when it became due, zero if the store keeps none).
	Started(ts []task.Task, now time.Time)
	// Ended is told of an attempt the store recorded, a (RELEASED for
	// one given back unrun), and the state its task went to.
	Ended(t *task.Task, a *task.Attempt, state task.State)
	// Rescued is told of a task taken over from a worker that lost its
	// lease.
	Rescued(t *task.Task)
	// Stale is told of a result the store refused: its worker had lost
	// the lease.
	Stale(t *task.Task)
	// Stuck is told of an attempt whose handler ignored the end of its
	// context past its grace.
	Stuck(t *task.Task)
	// ClaimFailed is told of a claim the store failed.
	ClaimFailed()
	// Slots adds to the slots of the client's worker: used and free.
	Slots(used, free int)
	// AlertsDropped is told of alerts a receiver dropped: its queue full
	// of alerts unlike each other, or undelivered at Stop.
	AlertsDropped(n int)
}
