package storetest

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

var refusedTests = map[string]func(*testing.T, *harness){
	// The database refuses the successes of one kind: in a batch that
	// mixes them with every other kind of item, those items alone get
	// task.ErrRefused and write nothing; every other is written.
	"ARefusedItemFailsAlone": func(t *testing.T, h *harness) {
		fine := h.enqueueClaim("fine", 6)
		bad := h.enqueueClaim("refused", 2)
		h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a")}})
		a := h.take("a")
		h.refuseSuccesses("refused")
		fs := []store.Finish{
			{TaskID: fine[0].ID, Token: fine[0].LeaseToken, State: task.Success},
			{TaskID: bad[0].ID, Token: bad[0].LeaseToken, State: task.Success},
			{TaskID: fine[1].ID, Token: fine[1].LeaseToken, State: task.Success, Attempt: task.Attempt{Output: "out"}},
			{TaskID: fine[2].ID, Token: fine[2].LeaseToken, State: task.Retrying, NextAt: h.now().Add(time.Hour), Error: "boom",
				Attempt: task.Attempt{Outcome: task.OutcomeError, Error: "boom"}},
			{TaskID: bad[1].ID, Token: bad[1].LeaseToken, State: task.Success, Attempt: task.Attempt{Output: "out"}},
			{TaskID: a.ID, Token: a.LeaseToken, State: task.Success},
			{TaskID: fine[3].ID, Token: fine[3].LeaseToken, State: task.Failed, Error: "no"},
			{TaskID: fine[4].ID, Token: fine[4].LeaseToken, State: task.Success},
			{TaskID: fine[5].ID, Token: fine[5].LeaseToken + 1000, State: task.Success},
		}
		errs := h.finish(fs...)
		for i, err := range errs {
			switch id := fs[i].TaskID; {
			case id == bad[0].ID || id == bad[1].ID:
				if !errors.Is(err, task.ErrRefused) || errors.Is(err, task.ErrLeaseLost) || !strings.Contains(err.Error(), "task "+strconv.FormatInt(id, 10)+" ") {
					t.Errorf("item %d (task %d, refused): %v, want task.ErrRefused naming the task", i, id, err)
				}
			case id == fine[5].ID:
				if !errors.Is(err, task.ErrLeaseLost) || errors.Is(err, task.ErrRefused) {
					t.Errorf("item %d (a lost lease): %v, want task.ErrLeaseLost", i, err)
				}
			case err != nil:
				t.Errorf("item %d (task %d): %v, want written", i, id, err)
			}
		}
		for want, ts := range map[task.State][]task.Task{
			task.Success: {fine[0], fine[1], fine[4], a}, task.Retrying: {fine[2]}, task.Failed: {fine[3]},
			task.Running: {fine[5], bad[0], bad[1]},
		} {
			for _, tk := range ts {
				if got := h.get(tk.ID); got.State != want || got.LeaseToken != tk.LeaseToken {
					t.Errorf("task %d (%s): %s under token %d, want %s under %d", tk.ID, tk.Kind, got.State, got.LeaseToken, want, tk.LeaseToken)
				}
			}
		}
		h.take("b") // its need succeeded beside the refused items
		// Nothing of the refused items was written: they end as anything
		// else the database allows.
		if errs := h.finish(store.Finish{TaskID: bad[0].ID, Token: bad[0].LeaseToken, State: task.Failed, Error: "not recorded",
			Attempt: task.Attempt{Outcome: task.OutcomeError, Error: "not recorded"}}); errs[0] != nil {
			t.Fatalf("fail the refused task: %v", errs[0])
		}
		if as := h.attempts(bad[0].ID); len(as) != 1 || as[0].Outcome != task.OutcomeError {
			t.Errorf("attempts of the refused task: %+v, want its one attempt, failed", as)
		}
	},
	// A batch of one refused item is that item's refusal, not a failure
	// of the batch (which would be taken for a store that is down).
	"ABatchOfOneRefusedItem": func(t *testing.T, h *harness) {
		bad := h.enqueueClaim("refused", 1)
		h.refuseSuccesses("refused")
		errs := h.finish(store.Finish{TaskID: bad[0].ID, Token: bad[0].LeaseToken, State: task.Success})
		if !errors.Is(errs[0], task.ErrRefused) {
			t.Errorf("finish: %v, want task.ErrRefused", errs[0])
		}
	},
}

// enqueueClaim enqueues n tasks of kind and claims them.
func (h *harness) enqueueClaim(kind string, n int) []task.Task {
	h.t.Helper()
	for range n {
		h.enqueue(job(kind))
	}
	got := h.claim(store.ClaimRequest{Kinds: []string{kind}, Limit: n + 1})
	if len(got) != n {
		h.t.Fatalf("claim kind %q: got %d tasks, want %d", kind, len(got), n)
	}
	return got
}

// refuseSuccesses makes the store refuse the successes of kind.
func (h *harness) refuseSuccesses(kind string) {
	h.t.Helper()
	if h.refuse == nil {
		h.t.Fatal("storetest: the driver's test gives no way to make its store refuse a success: pass storetest.RefusesSuccesses to Run")
	}
	h.refuse(h.t, h.s, kind)
}
