package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// cancelTests check the optional store.CancelWatcher capability, when the
// driver has it: the id of a running task cancelled, and nothing for a
// task cancelled before it ran; through another handle when the driver
// promises it (CancelsAcrossHandles: its notifications cross processes).
var cancelTests = map[string]func(*testing.T, *harness){
	"SeesARunningTaskCancelled": func(t *testing.T, h *harness) {
		ch := h.watchCancels(h.ctx)
		waiting := h.enqueue(job("k"))[0]
		if _, err := h.s.Act(h.ctx, waiting.ID, task.ActCancel); err != nil {
			t.Fatal(err)
		}
		running := h.claim(store.ClaimRequest{Limit: 1})
		if len(running) != 0 {
			t.Fatalf("claimed %d tasks, want none: the only one was cancelled", len(running))
		}
		r := h.enqueue(job("k"))[0]
		if got := h.claim(store.ClaimRequest{Limit: 1}); len(got) != 1 || got[0].ID != r.ID {
			t.Fatalf("claimed %v, want task %d", got, r.ID)
		}
		if _, err := h.s.Act(h.ctx, r.ID, task.ActCancel); err != nil {
			t.Fatal(err)
		}
		h.wantCancel(ch, r.ID, "a running task cancelled")
	},
	// A cancel through another handle (another process) reaches the
	// holder: at once where the driver promises it (CancelsAcrossHandles),
	// else at its next heartbeat, which finds the lease gone.
	"SeesAnotherHandlesCancel": func(t *testing.T, h *harness) {
		ch := h.watchCancels(h.ctx)
		if h.reopen == nil {
			t.Fatal("the suite needs a second handle: give storetest.WakesAcrossHandles its reopen")
		}
		other := h.other()
		r := h.enqueue(job("k"))[0]
		held := h.claim(store.ClaimRequest{Limit: 1})
		if _, err := other.Act(h.ctx, r.ID, task.ActCancel); err != nil {
			t.Fatalf("cancel through the other handle: %v", err)
		}
		if h.cancelsCross {
			h.wantCancel(ch, r.ID, "a running task cancelled through another handle")
			return
		}
		if lost := h.heartbeat("w1", lease, leaseOf(held[0])); len(lost) != 1 || lost[0].TaskID != r.ID {
			t.Fatalf("heartbeat after a cancel through another handle lost %v, want task %d's lease", lost, r.ID)
		}
	},
	"ClosesWhenCtxEnds": func(t *testing.T, h *harness) {
		ctx, cancel := context.WithCancel(h.ctx)
		ch := h.watchCancels(ctx)
		cancel()
		wantClosed(t, ch)
	},
}

// watchCancels starts the store's cancel feed, or skips the test:
// CancelWatcher is optional.
func (h *harness) watchCancels(ctx context.Context) <-chan int64 {
	h.t.Helper()
	w, ok := h.s.(store.CancelWatcher)
	if !ok {
		h.t.Skipf("the store (%T) is not a store.CancelWatcher (optional)", h.s)
	}
	ch, err := w.WatchCancels(ctx)
	if err != nil {
		h.t.Fatalf("watch cancels: %v", err)
	}
	return ch
}

// wantCancel waits for id on ch; any other id first is an error (only id
// was cancelled while running).
func (h *harness) wantCancel(ch <-chan int64, id int64, after string) {
	h.t.Helper()
	select {
	case got, ok := <-ch:
		if !ok || got != id {
			h.t.Fatalf("after %s: got %d (open %v), want task %d", after, got, ok, id)
		}
	case <-time.After(wakeWait):
		h.t.Fatalf("no cancel of task %d within %v of %s", id, wakeWait, after)
	}
}
