package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// wakeWait bounds the wait for a wake: a notification takes milliseconds.
const wakeWait = 10 * time.Second

// wakerTests check the optional store.Waker capability, when the driver
// has it: a wake after work becomes due, through the same handle, and
// through another when the driver promises it (WakesAcrossHandles).
var wakerTests = map[string]func(*testing.T, *harness){
	"WakesWhenWorkIsEnqueued": func(t *testing.T, h *harness) {
		ch := h.wake(h.ctx)
		h.enqueue(job("k"))
		h.wantWake(ch, "an Enqueue")
	},
	"WakesWhenADependentIsReleased": func(t *testing.T, h *harness) {
		h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a")}})
		a := h.take("a")
		ch := h.wake(h.ctx)
		h.end(a, task.Success)
		h.wantWake(ch, "the success that made a dependent READY")
	},
	"WakesOnAnotherHandlesEnqueue": func(t *testing.T, h *harness) {
		ch := h.wake(h.ctx)
		if h.reopen == nil {
			t.Skip("the driver does not promise wakes across handles (storetest.WakesAcrossHandles)")
		}
		other := h.other()
		if _, err := other.Enqueue(h.ctx, []task.NewTask{job("k")}); err != nil {
			t.Fatalf("enqueue through the other handle: %v", err)
		}
		h.wantWake(ch, "an Enqueue through another handle on the database")
	},
	"ClosesWhenCtxEnds": func(t *testing.T, h *harness) {
		ctx, cancel := context.WithCancel(h.ctx)
		ch := h.wake(ctx)
		cancel()
		wantClosed(t, ch)
	},
}

// wantClosed waits, bounded, for ch to be closed (values before are
// drained): a listener's channel once its context has ended.
func wantClosed[T any](t *testing.T, ch <-chan T) {
	t.Helper()
	deadline := time.After(wakeWait)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("the channel was not closed within %v of the end of its context", wakeWait)
		}
	}
}

// other opens another handle on the store's database, as another process
// would (WakesAcrossHandles), closed when the test ends.
func (h *harness) other() store.Store {
	h.t.Helper()
	o := h.reopen(h.t, h.s)
	h.t.Cleanup(func() {
		if err := o.Close(); err != nil {
			h.t.Errorf("close the other handle: %v", err)
		}
	})
	return o
}

// wake starts the store's wakes, or skips the test: Waker is optional.
func (h *harness) wake(ctx context.Context) <-chan struct{} {
	h.t.Helper()
	w, ok := h.s.(store.Waker)
	if !ok {
		h.t.Skipf("the store (%T) is not a store.Waker (optional)", h.s)
	}
	ch, err := w.Wake(ctx)
	if err != nil {
		h.t.Fatalf("wake: %v", err)
	}
	return ch
}

// wantWake waits for a value on ch, sent after what.
func (h *harness) wantWake(ch <-chan struct{}, what string) {
	h.t.Helper()
	select {
	case _, ok := <-ch:
		if !ok {
			h.t.Fatalf("the wake channel closed instead of waking after %s", what)
		}
	case <-time.After(wakeWait):
		h.t.Fatalf("no wake within %v of %s", wakeWait, what)
	}
}
