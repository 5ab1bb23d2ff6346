package storetest

import (
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// fenceTests: a lease token is unique in the store, across tasks and
// attempts, so that it fences: a result under one task's token is never
// taken for another's, and a downstream that keeps the largest token it
// has seen refuses the writes of a worker that lost its lease.
var fenceTests = map[string]func(*testing.T, *harness){
	"TokensUniqueInOneClaimAndAcrossClaims": func(t *testing.T, h *harness) {
		h.enqueue(job("k"), job("k"), job("k"), job("k"))
		seen := map[int64]int64{}
		add := func(ts []task.Task) {
			t.Helper()
			for _, x := range ts {
				if other, ok := seen[x.LeaseToken]; ok {
					t.Errorf("tasks %d and %d share lease token %d", other, x.ID, x.LeaseToken)
				}
				seen[x.LeaseToken] = x.ID
			}
		}
		add(h.claim(store.ClaimRequest{Kinds: []string{"k"}, Limit: 2}))
		add(h.claim(store.ClaimRequest{Worker: "w2", Kinds: []string{"k"}, Limit: 1}))
		add(h.claim(store.ClaimRequest{Worker: "w3", Kinds: []string{"k"}, Limit: 1}))
		if len(seen) != 4 {
			t.Fatalf("claimed %d tasks with distinct tokens, want 4", len(seen))
		}
	},
	"NewOwnerNewTokenLargerThanAnySeen": func(t *testing.T, h *harness) {
		h.enqueue(job("a"), job("b"))
		a := h.take("a")
		b := h.take("b")
		h.finish(store.Finish{TaskID: a.ID, Token: a.LeaseToken, State: task.Retrying, NextAt: h.now()})
		again := h.take("a")
		if again.LeaseToken <= max(a.LeaseToken, b.LeaseToken) {
			t.Errorf("task %d's second claim has token %d, want more than every token given (%d, %d)",
				a.ID, again.LeaseToken, a.LeaseToken, b.LeaseToken)
		}
		got, err := h.s.Rescue(h.ctx, store.RescueRequest{Worker: "w2", Owner: "w1", Lease: time.Minute, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			if r.LeaseToken <= again.LeaseToken {
				t.Errorf("rescued task %d under token %d, want more than %d", r.ID, r.LeaseToken, again.LeaseToken)
			}
		}
		if len(got) == 2 && got[0].LeaseToken == got[1].LeaseToken {
			t.Errorf("one rescue gave tasks %d and %d the same token %d", got[0].ID, got[1].ID, got[0].LeaseToken)
		}
	},
	"AnotherTasksTokenIsLeaseLostAndWritesNothing": func(t *testing.T, h *harness) {
		h.enqueue(job("a"), job("b"))
		a, b := h.take("a"), h.take("b")
		errs := h.finish(
			store.Finish{TaskID: b.ID, Token: a.LeaseToken, State: task.Failed},
			store.Finish{TaskID: a.ID, Token: b.LeaseToken, State: task.Success},
		)
		wantErr(t, errs[0], task.ErrLeaseLost)
		wantErr(t, errs[1], task.ErrLeaseLost)
		for _, c := range []task.Task{a, b} {
			got := h.get(c.ID)
			if got.State != task.Running || got.LeaseToken != c.LeaseToken || got.Attempt != 1 {
				t.Errorf("a result under another task's token wrote: task = %+v", got)
			}
			if as := h.attempts(c.ID); len(as) != 1 || as[0].Outcome != task.OutcomeRunning {
				t.Errorf("a result under another task's token closed the attempt: %+v", as)
			}
		}
	},
}
