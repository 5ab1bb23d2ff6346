package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

var enqueueTests = map[string]func(*testing.T, *harness){
	"OriginIsKeptAndClaimed": func(t *testing.T, h *harness) {
		h.enqueue(task.NewTask{Kind: "api-made", Origin: task.OriginAPI}, task.NewTask{Kind: "code-made"})
		h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{{Name: "a", Kind: "file-made", Origin: task.FileOrigin("h1")}}})
		for kind, want := range map[string]string{"api-made": task.OriginAPI, "code-made": "", "file-made": "file:h1"} {
			c := h.take(kind)
			if c.Origin != want {
				t.Errorf("claimed a task of kind %s with origin %q, want %q", kind, c.Origin, want)
			}
			if got := h.get(c.ID); got.Origin != want {
				t.Errorf("read a task of kind %s with origin %q, want %q", kind, got.Origin, want)
			}
		}
	},
	"InsertsReadyTasksInDefaultQueue": func(t *testing.T, h *harness) {
		got := h.enqueue(task.NewTask{Kind: "k", Args: []byte(`[1]`)})[0]
		if got.ID == 0 || got.State != task.Ready || got.Queue != "default" || got.Attempt != 0 ||
			got.RunID != 0 || got.CreatedAt.IsZero() || string(got.Args) != `[1]` {
			t.Errorf("task = %+v, want READY in queue default with attempt 0", got)
		}
		if back := h.get(got.ID); back.State != task.Ready || string(back.Args) != `[1]` {
			t.Errorf("stored task = %+v", back)
		}
	},
	"IdempotencyKeyAnswersTheSameWorkExisted": func(t *testing.T, h *harness) {
		made, err := h.s.Enqueue(h.ctx, []task.NewTask{{Kind: "k", Args: []byte(`{"a": 1, "b": [2]}`), IdempotencyKey: "key"}})
		if err != nil || made[0].Existed {
			t.Fatalf("first enqueue with the key: %+v, %v; want a task created", made, err)
		}
		// The same work: the args as the same JSON value, key order and
		// spacing aside; the other options of a repeat do not count.
		again, err := h.s.Enqueue(h.ctx, []task.NewTask{
			{Kind: "k", Args: []byte(`{"b":[2],"a":1}`), IdempotencyKey: "key", Queue: "elsewhere", Priority: 9}, job("k2")})
		if err != nil {
			t.Fatalf("the same work with the key again: %v", err)
		}
		if again[0].ID != made[0].ID || !again[0].Existed || again[0].Queue != "default" {
			t.Errorf("the same work with a used key answered %+v, want task %d as stored, Existed", again[0], made[0].ID)
		}
		if again[1].ID == made[0].ID || again[1].Existed {
			t.Errorf("a task without a key answered %+v, want a new task", again[1])
		}
		if ts, _ := h.s.ListTasks(h.ctx, task.Filter{}); len(ts) != 2 {
			t.Errorf("%d tasks stored, want 2", len(ts))
		}
	},
	"IdempotencyKeyRefusesOtherWork": func(t *testing.T, h *harness) {
		first := h.enqueue(task.NewTask{Kind: "k", Args: []byte(`{"a": 1}`), IdempotencyKey: "key"})[0]
		for _, c := range []struct {
			n       task.NewTask
			differs string
		}{
			{task.NewTask{Kind: "other", Args: []byte(`{"a": 1}`), IdempotencyKey: "key"}, "kind"},
			{task.NewTask{Kind: "k", Args: []byte(`{"a": 2}`), IdempotencyKey: "key"}, "args"},
			{task.NewTask{Kind: "k", IdempotencyKey: "key"}, "args"},
		} {
			_, err := h.s.Enqueue(h.ctx, []task.NewTask{job("before"), c.n, job("after")})
			var kc *task.KeyConflictError
			if !errors.As(err, &kc) || !errors.Is(err, task.ErrKeyConflict) || kc.Existing != first.ID || kc.Key != "key" || kc.Kind != "k" || kc.Differs != c.differs {
				t.Errorf("other %s under a used key: %v (%+v); want a KeyConflictError naming task %d and %q", c.differs, err, kc, first.ID, c.differs)
			}
		}
		if ts, _ := h.s.ListTasks(h.ctx, task.Filter{}); len(ts) != 1 {
			t.Errorf("%d tasks stored, want 1: a refused call inserts nothing", len(ts))
		}
		got, err := h.s.Enqueue(h.ctx, []task.NewTask{{Kind: "other", IdempotencyKey: "key", ReturnExisting: true}})
		if err != nil || got[0].ID != first.ID || !got[0].Existed || got[0].Kind != "k" {
			t.Errorf("other work under a used key, ReturnExisting: %+v, %v; want task %d, Existed", got, err, first.ID)
		}
	},
	"SameKeyTwiceInOneCallInsertsOnce": func(t *testing.T, h *harness) {
		got, err := h.s.Enqueue(h.ctx, []task.NewTask{{Kind: "k", IdempotencyKey: "key"}, {Kind: "k", IdempotencyKey: "key"}})
		if err != nil || got[0].ID != got[1].ID || got[0].Existed || !got[1].Existed {
			t.Errorf("%+v, %v; want one task, created then existed", got, err)
		}
		_, err = h.s.Enqueue(h.ctx, []task.NewTask{{Kind: "k", IdempotencyKey: "two"}, {Kind: "k", Args: []byte(`1`), IdempotencyKey: "two"}})
		if !errors.Is(err, task.ErrKeyConflict) {
			t.Errorf("other work under one key twice in one call: %v, want ErrKeyConflict", err)
		}
		if ts, _ := h.s.ListTasks(h.ctx, task.Filter{}); len(ts) != 1 {
			t.Errorf("%d tasks stored, want 1", len(ts))
		}
	},
	"NeedsAreInvalid": func(t *testing.T, h *harness) {
		_, err := h.s.Enqueue(h.ctx, []task.NewTask{{Name: "a", Kind: "k", Needs: []string{"b"}}})
		wantErr(t, err, task.ErrInvalid)
	},
	"RunAtDelaysTask": func(t *testing.T, h *harness) {
		at := h.now().Add(time.Hour)
		got := h.enqueue(task.NewTask{Kind: "k", RunAt: at})[0]
		if !near(got.NextAt, at) {
			t.Errorf("NextAt = %v, want %v", got.NextAt, at)
		}
		if c := h.claim(store.ClaimRequest{Limit: 10}); len(c) != 0 {
			t.Errorf("claimed %d tasks due in an hour", len(c))
		}
	},
}
