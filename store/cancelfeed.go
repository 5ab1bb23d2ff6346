package store

import (
	"context"
	"sync"
)

// CancelFeed fans a driver's cancels out to the channels of its
// WatchCancels callers, in process: a driver without a way to hear other
// processes' cancels (SQLite) gives its own. The zero CancelFeed is ready.
type CancelFeed struct {
	mu     sync.Mutex
	subs   map[chan int64]struct{}
	closed bool
}

// cancelBuffer is how many cancels a watcher may fall behind by before
// the feed drops the next ones for it.
const cancelBuffer = 256

// Watch returns a channel that receives each id Send is given from now
// until ctx ends or Close; it is closed then.
func (f *CancelFeed) Watch(ctx context.Context) <-chan int64 {
	ch := make(chan int64, cancelBuffer)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || ctx.Err() != nil {
		close(ch)
		return ch
	}
	if f.subs == nil {
		f.subs = map[chan int64]struct{}{}
	}
	f.subs[ch] = struct{}{}
	context.AfterFunc(ctx, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, ok := f.subs[ch]; ok {
			delete(f.subs, ch)
			close(ch)
		}
	})
	return ch
}

// Send tells every watcher that task id was cancelled, without waiting
// for any: a watcher whose buffer is full misses it.
func (f *CancelFeed) Send(ids ...int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for ch := range f.subs {
		for _, id := range ids {
			select {
			case ch <- id:
			default:
			}
		}
	}
}

// Close closes every watcher's channel; later watchers get a closed one.
func (f *CancelFeed) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for ch := range f.subs {
		delete(f.subs, ch)
		close(ch)
	}
}
