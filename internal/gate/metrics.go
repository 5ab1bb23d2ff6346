package gate

import (
	"time"

	"github.com/grit-run/grit/task"
)

// Metrics is what a gate and an engine count into as they work: the
// metrics package's Prometheus counters, or a user's own (grit.Metrics
// is this interface for users: the same methods). Both claimers, the
// engine for Go workers and the API server for remote workers, report
// through it, so that each count means the same for both. Its methods
// are called on the hot path, from many goroutines: they must be quick
// and safe for concurrent use.
type Metrics interface {
	// Enqueued is told of tasks enqueued, those an idempotency key
	// answered (Existed) among them.
	Enqueued(ts []task.Enqueued)
	// Started is told of tasks claimed, at now on the store's clock.
	Started(ts []task.Task, now time.Time)
	// Ended is told of an attempt the store recorded, a, and the state
	// its task went to.
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
	// Slots adds to the slots of a Go worker: used and free.
	Slots(used, free int)
	// AlertsDropped is told of alerts a receiver dropped: its queue full
	// of alerts unlike each other, or undelivered at Stop.
	AlertsDropped(n int)
}

// NoMetrics counts nothing.
type NoMetrics struct{}

func (NoMetrics) Enqueued([]task.Enqueued)                    {}
func (NoMetrics) Started([]task.Task, time.Time)              {}
func (NoMetrics) Ended(*task.Task, *task.Attempt, task.State) {}
func (NoMetrics) Rescued(*task.Task)                          {}
func (NoMetrics) Stale(*task.Task)                            {}
func (NoMetrics) Stuck(*task.Task)                            {}
func (NoMetrics) ClaimFailed()                                {}
func (NoMetrics) Slots(int, int)                              {}
func (NoMetrics) AlertsDropped(int)                           {}

// OrNoMetrics is m, or NoMetrics when m is nil.
func OrNoMetrics(m Metrics) Metrics {
	if m == nil {
		return NoMetrics{}
	}
	return m
}
