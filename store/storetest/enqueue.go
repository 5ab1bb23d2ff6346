package storetest

import (
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

var enqueueTests = map[string]func(*testing.T, *harness){
	"InsertsReadyTasksInDefaultQueue": func(t *testing.T, h *harness) {
		got := h.enqueue(store.NewTask{Kind: "k", Args: []byte(`[1]`)})[0]
		if got.ID == 0 || got.State != task.Ready || got.Queue != "default" || got.Attempt != 0 ||
			got.RunID != 0 || got.CreatedAt.IsZero() || string(got.Args) != `[1]` {
			t.Errorf("task = %+v, want READY in queue default with attempt 0", got)
		}
		if back := h.get(got.ID); back.State != task.Ready || string(back.Args) != `[1]` {
			t.Errorf("stored task = %+v", back)
		}
	},
	"IdempotencyKeyReturnsExistingTask": func(t *testing.T, h *harness) {
		first := h.enqueue(store.NewTask{Kind: "k", IdempotencyKey: "key"})[0]
		again := h.enqueue(store.NewTask{Kind: "other", IdempotencyKey: "key"}, job("k2"))
		if again[0].ID != first.ID || again[0].Kind != "k" {
			t.Errorf("enqueue with a used key returned %+v, want task %d", again[0], first.ID)
		}
		if again[1].ID == first.ID {
			t.Errorf("a task without key was given the existing task")
		}
		ts, _ := h.s.ListTasks(h.ctx, store.Filter{})
		if len(ts) != 2 {
			t.Errorf("%d tasks stored, want 2", len(ts))
		}
	},
	"SameKeyTwiceInOneCallInsertsOnce": func(t *testing.T, h *harness) {
		got := h.enqueue(store.NewTask{Kind: "k", IdempotencyKey: "key"}, store.NewTask{Kind: "k", IdempotencyKey: "key"})
		if got[0].ID != got[1].ID {
			t.Errorf("ids %d and %d, want one task", got[0].ID, got[1].ID)
		}
	},
	"NeedsAreInvalid": func(t *testing.T, h *harness) {
		_, err := h.s.Enqueue(h.ctx, []store.NewTask{{Name: "a", Kind: "k", Needs: []string{"b"}}})
		wantErr(t, err, task.ErrInvalid)
	},
	"RunAtDelaysTask": func(t *testing.T, h *harness) {
		at := h.now().Add(time.Hour)
		got := h.enqueue(store.NewTask{Kind: "k", RunAt: at})[0]
		if !near(got.NextAt, at) {
			t.Errorf("NextAt = %v, want %v", got.NextAt, at)
		}
		if c := h.claim(store.ClaimRequest{Limit: 10}); len(c) != 0 {
			t.Errorf("claimed %d tasks due in an hour", len(c))
		}
	},
}
