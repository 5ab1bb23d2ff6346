package store

import (
	"context"
	"sync"
)

// Feed fans a driver's notices out to the channels of its watchers, in
// process: a driver without a way to hear other processes' (SQLite) gives
// its own. The zero Feed is ready.
type Feed[T any] struct {
	mu     sync.Mutex
	subs   map[chan T]struct{}
	closed bool
}

// CancelFeed is the feed of WatchCancels: the ids of cancelled running
// tasks.
type CancelFeed = Feed[int64]

// PauseFeed is the feed of WatchPauses: a value after each pause or
// resume.
type PauseFeed = Feed[struct{}]

// cancelBuffer is how many notices a watcher may fall behind by before
// the feed drops the next ones for it.
const cancelBuffer = 256

// Watch returns a channel that receives each notice Send is given from
// now until ctx ends or Close; it is closed then.
func (f *Feed[T]) Watch(ctx context.Context) <-chan T {
	ch := make(chan T, cancelBuffer)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || ctx.Err() != nil {
		close(ch)
		return ch
	}
	if f.subs == nil {
		f.subs = map[chan T]struct{}{}
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

// Send tells every watcher each of ids (for cancels, that a task was
// cancelled), without waiting for any: a watcher whose buffer is full
// misses it.
func (f *Feed[T]) Send(ids ...T) {
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
func (f *Feed[T]) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for ch := range f.subs {
		delete(f.subs, ch)
		close(ch)
	}
}
