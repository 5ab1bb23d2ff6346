package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/grit-run/grit/store"
)

// notifier wakes every waiting claim at once: each waits on the channel of
// the current generation, which notify closes and replaces.
type notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

func newNotifier() *notifier { return &notifier{ch: make(chan struct{})} }

// wait returns a channel closed at the next notify.
func (n *notifier) wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ch
}

func (n *notifier) notify() {
	n.mu.Lock()
	defer n.mu.Unlock()
	close(n.ch)
	n.ch = make(chan struct{})
}

// listen relays the store's notifications (store.Waker), when it has
// them, to the waiting claims, so that a task enqueued by another process
// is claimed at once rather than at the next poll. A store that stops
// notifying is listened to again after a pause.
func (s *Server) listen(ctx context.Context) {
	w, ok := s.cfg.Store.(store.Waker)
	if !ok {
		return
	}
	for ctx.Err() == nil {
		ch, err := w.Wake(ctx)
		if errors.Is(err, store.ErrNoNotifications) {
			s.cfg.Logger.Info("the store cannot notify this server: waiting claims poll", "poll", s.cfg.Poll, "why", err)
			return
		}
		if err != nil {
			s.cfg.Logger.Warn("cannot listen for the store's notifications; claims poll", "err", err)
		} else {
			for range ch {
				s.wake.notify()
			}
		}
		pause(ctx, s.cfg.Poll)
	}
}

func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
