package storetest

import (
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// spreadTests check store.Spreader, how far a failure has spread.
var spreadTests = map[string]func(*testing.T, *harness){
	"CountsDistinctTasksOfTheScope": func(t *testing.T, h *harness) {
		sp := h.s
		start := h.now().Add(-time.Second)
		failWith := func(n task.NewTask, fp string, times int) task.Task {
			tk := h.enqueue(n)[0]
			for i := range times {
				next := h.now().Add(time.Hour) // not claimed again
				if i < times-1 {
					next = h.now()
				}
				c := h.claim(store.ClaimRequest{Kinds: []string{n.Kind}, Limit: 1})
				if len(c) != 1 || c[0].ID != tk.ID {
					t.Fatalf("claimed %v, want task %d", c, tk.ID)
				}
				h.finish(store.Finish{TaskID: c[0].ID, Token: c[0].LeaseToken, State: task.Retrying, NextAt: next,
					Error: "e", Fingerprint: fp, Attempt: task.Attempt{Outcome: task.OutcomeError, Error: "e", Fingerprint: fp, EndedAt: h.now()}})
			}
			return tk
		}
		for range 3 {
			failWith(task.NewTask{Kind: "k"}, "F", 1)
		}
		failWith(task.NewTask{Kind: "k"}, "F", 2) // one task, counted once
		failWith(task.NewTask{Kind: "k"}, "G", 1)
		failWith(task.NewTask{Kind: "other"}, "F", 1)
		failWith(task.NewTask{Kind: "x", Group: "g"}, "F", 1)
		ask := func(q store.SpreadQuery) store.Spread {
			t.Helper()
			got, err := sp.Spread(h.ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		if got := ask(store.SpreadQuery{Kind: "k", Fingerprint: "F", Since: start, Limit: 10, Succeeded: true}); got.Tasks != 4 || got.Succeeded {
			t.Errorf("kind k, F: %+v, want 4 tasks (one failed twice) and no success", got)
		}
		if got := ask(store.SpreadQuery{Kind: "k", Fingerprint: "F", Since: start, Limit: 2}); got.Tasks != 2 {
			t.Errorf("kind k, F, limit 2: %+v, want 2", got)
		}
		if got := ask(store.SpreadQuery{Kind: "x", Group: "g", Fingerprint: "F", Since: start, Limit: 10}); got.Tasks != 1 {
			t.Errorf("group g, F: %+v, want 1", got)
		}
		if got := ask(store.SpreadQuery{Kind: "k", Fingerprint: "F", Since: h.now().Add(time.Hour), Limit: 10}); got.Tasks != 0 {
			t.Errorf("kind k, F, since an hour from now: %+v, want 0", got)
		}
		h.enqueue(job("k"))
		c := h.claim(store.ClaimRequest{Kinds: []string{"k"}, Limit: 1})
		if len(c) != 1 {
			t.Fatal("no task of kind k to succeed")
		}
		h.end(c[0], task.Success)
		if got := ask(store.SpreadQuery{Kind: "k", Fingerprint: "F", Since: start, Limit: 10, Succeeded: true}); !got.Succeeded {
			t.Errorf("kind k after task %d succeeded: %+v, want a success", c[0].ID, got)
		}
	},
}
