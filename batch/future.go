package batch

import (
	"context"
	"sync/atomic"
)

// Future is one Send's result, to come. Make one with Send; it is safe for
// concurrent use.
type Future[R any] struct {
	done chan struct{}
	set  atomic.Bool // the first settle wins: the flush, or the caller's ctx
	val  R
	err  error
}

func newFuture[R any]() *Future[R] {
	return &Future[R]{done: make(chan struct{})}
}

// Done is closed when the result is there.
func (f *Future[R]) Done() <-chan struct{} { return f.done }

// Wait returns the item's result, or its error: the caller's context's
// cause, ErrClosed, the item's own rejection (ItemErrors) or an *Error of
// its batch. When ctx ends first it returns ctx's cause at once, and the
// batch goes on for the others; Wait may be called again.
func (f *Future[R]) Wait(ctx context.Context) (R, error) {
	select {
	case <-f.done:
		return f.val, f.err
	default:
	}
	select {
	case <-f.done:
		return f.val, f.err
	case <-ctx.Done():
		var zero R
		return zero, context.Cause(ctx)
	}
}

// settle sets the result unless it was already set, and reports whether it
// did.
func (f *Future[R]) settle(v R, err error) bool {
	if !f.set.CompareAndSwap(false, true) {
		return false
	}
	f.val, f.err = v, err
	close(f.done)
	return true
}

func (f *Future[R]) fail(err error) {
	var zero R
	f.settle(zero, err)
}

// settled reports whether the result is set or being set.
func (f *Future[R]) settled() bool { return f.set.Load() }
