package engine

import (
	"context"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// executors are the goroutines that run attempts, each one attempt after
// another. A goroutine started per attempt begins with a small stack and
// grows it, by copying, as its handler goes deeper (decoding JSON
// arguments is enough): on a busy worker that copying cost more than the
// rest of the engine's work for a task. An executor keeps its grown stack for
// the next attempt.
//
// The garbage collector halves the stack of a goroutine that uses less
// than a quarter of it, so an idle executor would lose its stack again: it
// waits for work below a frame of parkDepth bytes, which keeps a stack of
// up to four times that from being shrunk. Executors idle for executorIdle go
// away, so a burst of work does not hold its stacks for ever.
type executors struct {
	mu     sync.Mutex
	idle   []*executor // the most recently parked last: it is taken first
	closed bool
	made   int          // executors started, for tests
	live   atomic.Int64 // executors not yet ended, for tests
}

// executor is one executor goroutine's mailbox.
type executor struct {
	work   chan job
	parked time.Time
}

// job is an attempt handed to a executor.
type job struct {
	ctx context.Context
	a   *inflight
	h   *Handler
}

const (
	// parkDepth is the stack an idle executor holds under its wait.
	parkDepth = 4 << 10
	// executorIdle is how long a executor waits for work before it ends.
	executorIdle = 30 * time.Second
)

// dispatch runs j on an idle executor, or on a new one.
func (e *Engine) dispatch(j job) {
	p := &e.executors
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		r := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		r.work <- j // buffered: never waits
		return
	}
	p.made++
	p.mu.Unlock()
	p.live.Add(1)
	go e.execLoop(&executor{work: make(chan job, 1)}, j)
}

// execLoop runs j, then each attempt it is handed, until it is retired.
// Profiler labels a handler set on its goroutine (pprof.SetGoroutineLabels)
// are cleared after its attempt: the next attempt on this executor starts
// without them, as it would on a goroutine of its own.
func (e *Engine) execLoop(r *executor, j job) {
	defer e.executors.live.Add(-1)
	for ok := true; ok; j, ok = e.park(r) {
		e.execute(j.ctx, j.a, j.h)
		pprof.SetGoroutineLabels(context.Background())
	}
}

// park waits for r's next attempt below a frame of parkDepth bytes; false
// when r is retired.
//
//go:noinline
func (e *Engine) park(r *executor) (job, bool) {
	var depth [parkDepth]byte
	hold(&depth)
	p := &e.executors
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return job{}, false
	}
	r.parked = e.cfg.Clock.Now()
	p.idle = append(p.idle, r)
	p.mu.Unlock()
	j, ok := <-r.work
	return j, ok
}

// hold keeps its argument on the caller's stack: it is not inlined, so the
// compiler cannot drop the frame, and it keeps nothing, so the argument
// does not escape to the heap.
//
//go:noinline
func hold(*[parkDepth]byte) {}

// retireIdle ends the executors idle since before cutoff: the oldest are
// first in the list.
func (e *Engine) retireIdle(cutoff time.Time) {
	p := &e.executors
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for n < len(p.idle) && p.idle[n].parked.Before(cutoff) {
		close(p.idle[n].work)
		n++
	}
	p.idle = slices.Delete(p.idle, 0, n) // clears the tail: no retired executor stays referenced
}

// closeExecutors ends every idle executor, and every busy one when its attempt
// is over.
func (e *Engine) closeExecutors() {
	p := &e.executors
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, r := range p.idle {
		close(r.work)
	}
	p.idle = nil
}
