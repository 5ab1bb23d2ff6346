package engine

import (
	"context"
	"sync"

	"github.com/grit-run/grit/store"
)

// confirmReq is an attempt about to start its process, waiting for the
// next heartbeat to say whether its lease still holds. The answer goes to
// done (buffered: an attempt that gave up waiting holds nothing up).
type confirmReq struct {
	lease store.Lease
	done  chan confirmAns
}

// confirmAns is a confirmation's answer: the lease was lost, or the store
// failed.
type confirmAns struct {
	lost bool
	err  error
}

// confirmQueue holds the confirmations asked for and not yet sent. One
// statement per process, before it starts, was a thousand statements
// when a claim handed a worker a thousand process tasks: they filled the
// store's connections and locked the worker's row in turn, the heartbeat
// waited behind them until its deadline, and the worker gave up leases
// the database would have renewed. The heartbeat loop sends them all
// with its next beat instead (heartbeatLoop).
type confirmQueue struct {
	mu    sync.Mutex
	reqs  []confirmReq
	ready chan struct{} // holds a token while reqs may not be empty
	asked int           // requests pushed, for tests
}

func newConfirmQueue() *confirmQueue { return &confirmQueue{ready: make(chan struct{}, 1)} }

func (q *confirmQueue) push(r confirmReq) {
	q.mu.Lock()
	q.reqs = append(q.reqs, r)
	q.asked++
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take removes and returns every request waiting.
func (q *confirmQueue) take() []confirmReq {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.reqs
	q.reqs = nil
	return out
}

func (q *confirmQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.reqs)
}

// counts returns how many requests wait and how many were ever pushed.
func (q *confirmQueue) counts() (waiting, asked int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.reqs), q.asked
}

// withWaiting adds to held the leases of waiting attempts it lacks (an
// attempt is running, and so held, before it asks: this is a guard).
func withWaiting(held []store.Lease, waiting []confirmReq) []store.Lease {
	if len(waiting) == 0 {
		return held
	}
	in := make(map[store.Lease]bool, len(held))
	for _, l := range held {
		in[l] = true
	}
	for _, r := range waiting {
		if !in[r.lease] {
			held = append(held, r.lease)
			in[r.lease] = true
		}
	}
	return held
}

// answer tells each waiting attempt what the beat said of its lease.
func answer(waiting []confirmReq, lost []store.Lease, err error) {
	if len(waiting) == 0 {
		return
	}
	gone := make(map[store.Lease]bool, len(lost))
	for _, l := range lost {
		gone[l] = true
	}
	for _, r := range waiting {
		r.done <- confirmAns{lost: gone[r.lease], err: err}
	}
}

// renewBeforeStart asks the next heartbeat to renew the lease l, and
// waits for its answer until ctx ends.
func (e *Engine) renewBeforeStart(ctx context.Context, l store.Lease) confirmAns {
	r := confirmReq{lease: l, done: make(chan confirmAns, 1)}
	e.confirms.push(r)
	select {
	case a := <-r.done:
		return a
	case <-ctx.Done():
		return confirmAns{err: context.Cause(ctx)}
	}
}
