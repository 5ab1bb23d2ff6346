package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

var claimTests = map[string]func(*testing.T, *harness){
	"NextDueLooksNoFurtherThanDueBefore": func(t *testing.T, h *harness) {
		at := h.now().Add(time.Hour).Truncate(time.Millisecond)
		h.enqueue(task.NewTask{Kind: "later", RunAt: at})
		if next, ok, err := h.s.NextDue(h.ctx, store.ClaimRequest{DueBefore: h.now().Add(time.Minute)}); err != nil || ok {
			t.Errorf("next due within a minute: %v %v (%v), want none: the task is due in an hour", next, ok, err)
		}
		for _, req := range []store.ClaimRequest{{}, {DueBefore: at}, {DueBefore: at.Add(time.Hour)}} {
			if next, ok, err := h.s.NextDue(h.ctx, req); err != nil || !ok || !next.Equal(at) {
				t.Errorf("next due by %v: %v %v (%v), want %v", req.DueBefore, next, ok, err, at)
			}
		}
	},
	"ClaimedTaskSaysWhenItBecameDue": func(t *testing.T, h *harness) {
		due := h.now().Add(-time.Minute).Truncate(time.Millisecond)
		h.enqueue(task.NewTask{Kind: "late", RunAt: due})
		tk := h.take("late")
		if !tk.NextAt.Equal(due) {
			t.Errorf("claimed with NextAt %v, want %v, when it became due", tk.NextAt, due)
		}
		retry := h.now().Add(-time.Second).Truncate(time.Millisecond)
		h.finish(store.Finish{TaskID: tk.ID, Token: tk.LeaseToken, State: task.Retrying, NextAt: retry,
			Error: "boom", Attempt: task.Attempt{Outcome: task.OutcomeError, Error: "boom"}})
		if tk = h.take("late"); !tk.NextAt.Equal(retry) {
			t.Errorf("claimed again with NextAt %v, want the retry's time %v", tk.NextAt, retry)
		}
		if got := h.get(tk.ID); !got.NextAt.IsZero() {
			t.Errorf("the RUNNING task reads with NextAt %v, want none", got.NextAt)
		}
	},
	"OrderIsPriorityThenDueThenID": func(t *testing.T, h *harness) {
		now := h.now()
		at := func(d time.Duration, prio int) task.NewTask {
			return task.NewTask{Kind: "k", RunAt: now.Add(d), Priority: prio}
		}
		ts := h.enqueue(at(-3*time.Second, 0), at(-time.Second, 5), at(-2*time.Second, 5),
			at(-3*time.Second, 0), at(time.Hour, 9))
		want := []int64{ts[2].ID, ts[1].ID, ts[0].ID, ts[3].ID}
		var got []int64
		for range want {
			got = append(got, ids(h.claim(store.ClaimRequest{Limit: 1}))...)
		}
		if !slices.Equal(got, want) {
			t.Errorf("claim order %v, want %v", got, want)
		}
	},
	"TakesTheFirstInOrder": func(t *testing.T, h *harness) {
		ts := h.enqueue(job("k"), task.NewTask{Kind: "k", Priority: 1}, job("k"))
		got := sortedIDs(h.claim(store.ClaimRequest{Limit: 2}))
		if want := []int64{ts[0].ID, ts[1].ID}; !slices.Equal(got, want) {
			t.Errorf("claimed %v, want %v", got, want)
		}
	},
	"RespectsQueues": func(t *testing.T, h *harness) {
		ts := h.enqueue(task.NewTask{Kind: "k", Queue: "a"}, task.NewTask{Kind: "k", Queue: "b"}, task.NewTask{Kind: "k", Queue: "c"})
		got := sortedIDs(h.claim(store.ClaimRequest{Queues: []string{"a", "c"}, Limit: 10}))
		if want := []int64{ts[0].ID, ts[2].ID}; !slices.Equal(got, want) {
			t.Errorf("claimed %v, want %v", got, want)
		}
	},
	"RespectsRun": func(t *testing.T, h *harness) {
		r1 := h.submit(task.NewRun{Name: "one", Tasks: []task.NewTask{{Name: "a", Kind: "k"}, {Name: "b", Kind: "k", Needs: []string{"a"}}}})
		r2 := h.submit(task.NewRun{Name: "two", Tasks: []task.NewTask{{Name: "a", Kind: "k"}}})
		h.enqueue(job("k"))
		got := h.claim(store.ClaimRequest{Run: r1.ID, Limit: 10})
		if len(got) != 1 || got[0].RunID != r1.ID || got[0].Name != "a" {
			t.Fatalf("claimed %+v for run %d; want its task a alone (b waits for a; run %d and a task in no run are not its)", got, r1.ID, r2.ID)
		}
		if more := h.claim(store.ClaimRequest{Run: r1.ID, Limit: 10}); len(more) != 0 {
			t.Errorf("claimed %+v more for run %d; want none", more, r1.ID)
		}
		if rest := h.claim(store.ClaimRequest{Limit: 10}); len(rest) != 2 {
			t.Errorf("a claim for any run took %d tasks; want run %d's and the one in no run", len(rest), r2.ID)
		}
	},
	"RunClaimOrderIsPriorityThenID": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{
			{Name: "a", Kind: "k"}, {Name: "b", Kind: "k", Priority: 5}, {Name: "c", Kind: "k"}, {Name: "d", Kind: "k", Priority: 5},
		}})
		h.submit(task.NewRun{Name: "other", Tasks: []task.NewTask{{Name: "x", Kind: "k", Priority: 9}}})
		var names []string
		for _, limit := range []int{3, 1} {
			for _, c := range h.claim(store.ClaimRequest{Run: r.ID, Limit: limit}) {
				names = append(names, c.Name)
			}
		}
		if want := []string{"b", "d", "a", "c"}; !slices.Equal(names, want) {
			t.Errorf("run claims took %v, want %v", names, want)
		}
	},
	"RespectsKinds": func(t *testing.T, h *harness) {
		ts := h.enqueue(job("a"), job("b"), job("c"))
		got := sortedIDs(h.claim(store.ClaimRequest{Kinds: []string{"b"}, Limit: 10}))
		if want := []int64{ts[1].ID}; !slices.Equal(got, want) {
			t.Errorf("claimed %v, want %v", got, want)
		}
	},
	"RespectsLimit": func(t *testing.T, h *harness) {
		h.enqueue(job("k"), job("k"), job("k"))
		if got := h.claim(store.ClaimRequest{Limit: 2}); len(got) != 2 {
			t.Errorf("claimed %d, want 2", len(got))
		}
		if got := h.claim(store.ClaimRequest{Limit: 2}); len(got) != 1 {
			t.Errorf("claimed %d, want the 1 left", len(got))
		}
	},
	"NothingDueClaimsNothing": func(t *testing.T, h *harness) {
		if got := h.claim(store.ClaimRequest{Limit: 5}); len(got) != 0 {
			t.Errorf("claimed %d from an empty store", len(got))
		}
	},
	"RetryingIsNotClaimedBeforeNextAt": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.take("k")
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Retrying, NextAt: h.now().Add(time.Hour)})
		if got := h.claim(store.ClaimRequest{Limit: 1}); len(got) != 0 {
			t.Errorf("claimed a RETRYING task before its NextAt")
		}
	},
	"RetryingIsClaimedOnceNextAtPassed": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.take("k")
		next := h.now().Add(shortLease)
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Retrying, NextAt: next})
		h.waitPast(next)
		got := h.claim(store.ClaimRequest{Limit: 1})
		if len(got) != 1 || got[0].ID != c.ID || got[0].Attempt != 2 {
			t.Errorf("after NextAt claimed %+v, want task %d at attempt 2", got, c.ID)
		}
	},
	"OpensAttemptAndBumpsToken": func(t *testing.T, h *harness) {
		before := h.enqueue(job("k"))[0]
		c := h.claim(store.ClaimRequest{Worker: "w7", Limit: 1, Lease: time.Hour})[0]
		if c.State != task.Running || c.Attempt != 1 || c.LeaseOwner != "w7" || c.LeaseToken <= before.LeaseToken ||
			c.FirstStartedAt.IsZero() || !c.LeaseExpires.After(h.now().Add(50*time.Minute)) {
			t.Errorf("claimed %+v, want RUNNING, attempt 1, owner w7, a larger token, a lease of an hour", c)
		}
		as := h.attempts(c.ID)
		if len(as) != 1 || as[0].Outcome != task.OutcomeRunning || as[0].Number != 1 ||
			as[0].Worker != "w7" || as[0].LeaseToken != c.LeaseToken || as[0].StartedAt.IsZero() {
			t.Errorf("attempts %+v, want one RUNNING attempt 1 of w7 under the claim's token", as)
		}
	},
	"EveryClaimGivesALargerToken": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c1 := h.take("k")
		h.finish(store.Finish{TaskID: c1.ID, Token: c1.LeaseToken, State: task.Ready, Refund: true})
		c2 := h.take("k")
		if c2.LeaseToken <= c1.LeaseToken {
			t.Errorf("second claim token %d, want more than %d", c2.LeaseToken, c1.LeaseToken)
		}
	},
	"ConcurrentClaimersNeverShareATask": func(t *testing.T, h *harness) {
		const tasks, claimers = 200, 8
		ts := make([]task.NewTask, tasks)
		for i := range ts {
			ts[i] = job("k")
		}
		h.enqueue(ts...)
		counts := claimConcurrently(t, h, claimers)
		if len(counts) != tasks {
			t.Errorf("%d distinct tasks claimed, want %d", len(counts), tasks)
		}
		for id, n := range counts {
			if n != 1 {
				t.Errorf("task %d claimed %d times", id, n)
			}
		}
	},
}

// claimConcurrently claims with n workers until none gets anything and
// counts the claims of each task.
func claimConcurrently(t *testing.T, h *harness, n int) map[int64]int {
	var mu sync.Mutex
	counts := map[int64]int{}
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			for {
				got, err := h.s.Claim(h.ctx, store.ClaimRequest{Worker: fmt.Sprint("w", w), Limit: 3, Lease: lease})
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, c := range got {
					counts[c.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return counts
}
