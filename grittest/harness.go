package grittest

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/grit-run/grit/internal/clock"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// harness is the test client's store: the SQLite store (every method and
// capability of it, the engine's whole path), on the test's fake clock,
// which it lends the engine (clock.Source), with three changes. Its
// worker claims only the task Work names, once, so that nothing runs that
// the test did not ask for; it tells Work when that attempt's result is
// recorded; and it keeps the events published and the messages sent,
// which the store itself keeps only as the tasks and receives they turn
// into.
type harness struct {
	*sqlite.Store
	fc   *clock.Fake
	poke chan struct{} // wakes the engine's claim loop (Wake)

	mu       sync.Mutex
	kinds    []string  // the kinds the worker serves, as it registered
	target   int64     // the task the next claim takes; 0: none
	running  task.Task // the target as claimed, until its result is recorded
	done     chan finished
	events   []published
	messages []task.Message
}

// published is an event as the store took it, with the task whose
// attempt published it (0: published by the client).
type published struct {
	event task.Event
	by    int64
}

// finished is the store's answer to the result of the attempt Work asked
// for: nil when it recorded it.
type finished struct {
	f   store.Finish
	err error
}

func (h *harness) Clock() clock.Clock { return h.fc }

// arm makes the next claim take task id, and wakes the claim loop; its
// result comes on the channel returned.
func (h *harness) arm(id int64) <-chan finished {
	h.mu.Lock()
	h.target, h.running = id, task.Task{}
	h.done = make(chan finished, 1)
	done := h.done
	h.mu.Unlock()
	select {
	case h.poke <- struct{}{}:
	default:
	}
	return done
}

// disarm gives up on the task armed.
func (h *harness) disarm() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.target, h.running, h.done = 0, task.Task{}, nil
}

// Claim takes the task Work armed, if req lets the worker take it, and
// nothing else.
func (h *harness) Claim(ctx context.Context, req store.ClaimRequest) ([]task.Task, error) {
	h.mu.Lock()
	id := h.target
	h.mu.Unlock()
	if id == 0 {
		return nil, nil
	}
	ts, err := h.Store.ClaimTask(ctx, req, id)
	if len(ts) == 1 {
		h.mu.Lock()
		if h.target == id {
			h.target, h.running = 0, ts[0]
		}
		h.mu.Unlock()
	}
	return ts, err
}

// Finish records results as the store does, keeps the events of those
// it took, and answers Work when the armed task's is among them.
func (h *harness) Finish(ctx context.Context, fs []store.Finish) ([]error, error) {
	errs, err := h.Store.Finish(ctx, fs)
	if err != nil {
		return errs, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, f := range fs {
		if errs[i] == nil {
			for _, e := range f.Publish {
				h.events = append(h.events, published{event: e, by: f.TaskID})
			}
		}
		if h.done != nil && f.TaskID == h.running.ID && f.Token == h.running.LeaseToken {
			h.done <- finished{f: f, err: errs[i]}
			h.done = nil
		}
	}
	return errs, nil
}

// Publish publishes as the store does, and keeps the events.
func (h *harness) Publish(ctx context.Context, evs []task.Event) ([]task.Task, error) {
	ts, err := h.Store.Publish(ctx, evs)
	if err == nil {
		h.mu.Lock()
		for _, e := range evs {
			h.events = append(h.events, published{event: e})
		}
		h.mu.Unlock()
	}
	return ts, err
}

// Send keeps a message for its task as the store does, and keeps it
// here too: a receive takes it from the store.
func (h *harness) Send(ctx context.Context, taskID int64, topic string, payload json.RawMessage) (task.Message, error) {
	m, err := h.Store.Send(ctx, taskID, topic, payload)
	if err == nil {
		h.mu.Lock()
		h.messages = append(h.messages, m)
		h.mu.Unlock()
	}
	return m, err
}

// RegisterWorker registers the worker as the store does, and notes the
// kinds it serves.
func (h *harness) RegisterWorker(ctx context.Context, w task.Worker) error {
	h.mu.Lock()
	h.kinds = slices.Clone(w.Kinds)
	h.mu.Unlock()
	return h.Store.RegisterWorker(ctx, w)
}

// Wake relays the store's wake-ups, and Work's.
func (h *harness) Wake(ctx context.Context) (<-chan struct{}, error) {
	in, err := h.Store.Wake(ctx)
	if err != nil {
		return nil, err
	}
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		for {
			select {
			case _, ok := <-in:
				if !ok {
					return
				}
			case <-h.poke:
			case <-ctx.Done():
				return
			}
			select {
			case out <- struct{}{}:
			default:
			}
		}
	}()
	return out, nil
}

// served reports the kinds the worker serves.
func (h *harness) served() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.kinds)
}

// logs returns the events and messages kept so far.
func (h *harness) logs() ([]published, []task.Message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events), slices.Clone(h.messages)
}

// claimed reports whether the worker has claimed the armed task id.
func (h *harness) claimed(id int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.running.ID == id
}
