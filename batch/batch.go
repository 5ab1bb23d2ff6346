package batch

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Batcher groups the items of many Send calls into batches for
// Config.Flush. Make one with New; it is safe for concurrent use.
type Batcher[T, R any] struct {
	cfg Config[T, R] // with the defaults filled in

	// life is the Batcher's own lifetime, the parent of every flush: no
	// caller's context may cut a batch that others wait on. Close ends it
	// when its own context ends first.
	life    context.Context
	abort   context.CancelCauseFunc
	timeout error // the cause of an attempt's Timeout, told apart by identity

	slots   chan struct{} // one per item buffered or in flight
	closing chan struct{} // closed by Close: wakes Sends waiting for room
	drained chan struct{} // closed once closed and nothing is left to flush

	mu        sync.Mutex
	buf       []*entry[T, R] // the batch being filled
	gen       uint64         // counts cut batches, so a stale timer is ignored
	timer     *time.Timer    // flushes buf at its Interval
	queue     [][]*entry[T, R]
	running   int // flush goroutines, at most MaxInFlight
	closed    bool
	isDrained bool
}

// entry is one Send's item on its way.
type entry[T, R any] struct {
	item T
	f    *Future[R]
	stop func() bool // unregisters the caller's context's AfterFunc
}

// never is the stop of a caller's context that cannot end.
func never() bool { return false }

// New returns a Batcher that sends batches with cfg.Flush, or an error
// wrapping ErrConfig that says which fields are wrong.
func New[T, R any](cfg Config[T, R]) (*Batcher[T, R], error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	life, abort := context.WithCancelCause(context.Background())
	return &Batcher[T, R]{
		cfg:     cfg,
		life:    life,
		abort:   abort,
		timeout: fmt.Errorf("%w after %v", ErrTimeout, cfg.Timeout),
		slots:   make(chan struct{}, cfg.MaxPending),
		closing: make(chan struct{}),
		drained: make(chan struct{}),
		buf:     make([]*entry[T, R], 0, cfg.MaxSize),
	}, nil
}

// Send adds item to the batch being filled and returns its future. It
// blocks while MaxPending items are buffered or in flight; if ctx ends
// first, or the Batcher is closed, the future fails at once with ctx's
// cause or ErrClosed. Until the item's batch starts flushing, ctx ending
// fails the future and takes the item out of its batch; after, it only fails
// the future, and the batch goes on for the others.
func (b *Batcher[T, R]) Send(ctx context.Context, item T) *Future[R] {
	f := newFuture[R]()
	if err := b.acquire(ctx); err != nil {
		f.fail(err)
		return f
	}
	e := &entry[T, R]{item: item, f: f, stop: never}
	if ctx.Done() != nil {
		e.stop = context.AfterFunc(ctx, func() { f.fail(context.Cause(ctx)) })
	}
	if !b.add(e) {
		e.stop()
		b.release(1)
		f.fail(ErrClosed)
	}
	return f
}

// Do sends item and waits for its result: Send(ctx, item).Wait(ctx).
func (b *Batcher[T, R]) Do(ctx context.Context, item T) (R, error) {
	return b.Send(ctx, item).Wait(ctx)
}

// Close stops accepting items, flushes the ones left and waits for every
// flush to end. If ctx ends first, it cuts the flushes off (their futures
// fail with an error wrapping ErrClosed) and returns ctx's cause without
// waiting for Flush calls that ignore their context. Close may be called
// more than once.
func (b *Batcher[T, R]) Close(ctx context.Context) error {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.closing)
		if len(b.buf) > 0 {
			b.dispatchLocked(b.cutLocked())
		}
		b.checkDrainedLocked()
	}
	b.mu.Unlock()
	select {
	case <-b.drained:
		return nil
	case <-ctx.Done():
		cause := context.Cause(ctx)
		b.stop(fmt.Errorf("%w before its batches were flushed: %w", ErrClosed, cause))
		return cause
	}
}

// acquire takes a place for one item.
func (b *Batcher[T, R]) acquire(ctx context.Context) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	select {
	case <-b.closing:
		return ErrClosed
	case b.slots <- struct{}{}:
		return nil
	default:
	}
	select {
	case <-b.closing:
		return ErrClosed
	case b.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (b *Batcher[T, R]) release(n int) {
	for range n {
		<-b.slots
	}
}

// add puts e in the batch being filled and flushes it if it is full; it
// reports false if the Batcher is closed.
func (b *Batcher[T, R]) add(e *entry[T, R]) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.buf = append(b.buf, e)
	switch len(b.buf) {
	case b.cfg.MaxSize:
		b.dispatchLocked(b.cutLocked())
	case 1:
		gen := b.gen
		b.timer = time.AfterFunc(b.cfg.Interval, func() { b.onInterval(gen) })
	}
	return true
}

func (b *Batcher[T, R]) onInterval(gen uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if gen == b.gen && len(b.buf) > 0 {
		b.dispatchLocked(b.cutLocked())
	}
}

// cutLocked takes the batch being filled and starts a new one.
func (b *Batcher[T, R]) cutLocked() []*entry[T, R] {
	batch := b.buf
	b.buf = make([]*entry[T, R], 0, b.cfg.MaxSize)
	b.gen++
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	return batch
}

// dispatchLocked flushes batch in a new goroutine if fewer than MaxInFlight
// run, or queues it for the first one to finish.
func (b *Batcher[T, R]) dispatchLocked(batch []*entry[T, R]) {
	if b.running >= b.cfg.MaxInFlight {
		b.queue = append(b.queue, batch)
		return
	}
	b.running++
	go b.work(batch)
}

// work flushes batch, then queued batches until there are none.
func (b *Batcher[T, R]) work(batch []*entry[T, R]) {
	for batch != nil {
		b.flush(batch)
		batch = b.next()
	}
}

func (b *Batcher[T, R]) next() []*entry[T, R] {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) > 0 {
		batch := b.queue[0]
		b.queue[0] = nil
		b.queue = b.queue[1:]
		return batch
	}
	b.running--
	b.checkDrainedLocked()
	return nil
}

func (b *Batcher[T, R]) checkDrainedLocked() {
	if b.closed && !b.isDrained && b.running == 0 && len(b.queue) == 0 && len(b.buf) == 0 {
		b.isDrained = true
		close(b.drained)
	}
}

// stop cuts off running flushes and fails the queued batches, which would
// otherwise wait for flushes that may never end.
func (b *Batcher[T, R]) stop(cause error) {
	b.abort(cause)
	b.mu.Lock()
	queued := b.queue
	b.queue = nil
	b.checkDrainedLocked()
	b.mu.Unlock()
	for _, batch := range queued {
		b.fail(batch, cause)
	}
}
