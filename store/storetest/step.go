package storetest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// stepTests check store.Stepper, the recorded steps.
var stepTests = map[string]func(*testing.T, *harness){
	"RecordsAcrossAttemptsFencedByTheLease": func(t *testing.T, h *harness) {
		sp := h.s
		h.enqueue(job("charge"))
		c := h.take("charge")
		first := h.recordStep(sp, c, task.Step{Seq: 1, Name: "authorize", Occurrence: 1, Attempt: 1, Result: json.RawMessage(`{"auth":"a-1"}`)})
		if first.RecordedAt.IsZero() || string(first.Result) != `{"auth":"a-1"}` {
			t.Errorf("recorded %+v", first)
		}
		// Recording the same seq again answers the first record.
		again := h.recordStep(sp, c, task.Step{Seq: 1, Name: "other", Occurrence: 1, Attempt: 1, Result: json.RawMessage(`2`)})
		if again.Name != "authorize" || string(again.Result) != `{"auth":"a-1"}` {
			t.Errorf("seq 1 again answered %+v, want the first record", again)
		}
		if _, err := sp.RecordStep(h.ctx, c.ID, c.LeaseToken+1000, task.Step{Seq: 2, Name: "x", Occurrence: 1, Attempt: 1, Result: json.RawMessage(`1`)}); !errors.Is(err, task.ErrLeaseLost) {
			t.Errorf("a record under another token: %v, want ErrLeaseLost", err)
		}
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Retrying, NextAt: h.now(), Error: "reset"})
		if _, err := sp.RecordStep(h.ctx, c.ID, c.LeaseToken, task.Step{Seq: 2, Name: "x", Occurrence: 1, Attempt: 1, Result: json.RawMessage(`1`)}); !errors.Is(err, task.ErrLeaseLost) {
			t.Errorf("a record by an attempt that ended: %v, want ErrLeaseLost", err)
		}
		c2 := h.take("charge")
		h.recordStep(sp, c2, task.Step{Seq: 2, Name: "capture", Occurrence: 1, Attempt: 2, Result: json.RawMessage(`"ok"`)})
		got := h.steps(sp, c.ID)
		if len(got) != 2 || got[0].Name != "authorize" || got[0].Attempt != 1 || got[1].Name != "capture" || got[1].Attempt != 2 || string(got[1].Result) != `"ok"` {
			t.Errorf("steps %+v, want authorize (attempt 1) then capture (attempt 2)", got)
		}
		if got := h.steps(sp, c.ID+1000); len(got) != 0 {
			t.Errorf("steps of no task: %+v", got)
		}
	},
	"RefusesWhatCannotBeRecorded": func(t *testing.T, h *harness) {
		sp := h.s
		h.enqueue(job("big"))
		c := h.take("big")
		big := json.RawMessage(`"` + strings.Repeat("x", task.MaxStepResult) + `"`)
		for _, s := range []task.Step{
			{Seq: 1, Name: "big", Occurrence: 1, Attempt: 1, Result: big},
			{Seq: 1, Name: "bad", Occurrence: 1, Attempt: 1, Result: json.RawMessage(`{`)},
			{Seq: 0, Name: "zero", Occurrence: 1, Attempt: 1, Result: json.RawMessage(`1`)},
			{Seq: 1, Name: "", Occurrence: 1, Attempt: 1, Result: json.RawMessage(`1`)},
		} {
			if _, err := sp.RecordStep(h.ctx, c.ID, c.LeaseToken, s); !errors.Is(err, task.ErrInvalid) {
				t.Errorf("step %q: %v, want ErrInvalid", s.Name, err)
			}
		}
		if got := h.steps(sp, c.ID); len(got) != 0 {
			t.Errorf("refused steps were recorded: %+v", got)
		}
	},
	"PrunedWithTheirTask": func(t *testing.T, h *harness) {
		sp := h.s
		p := h.s
		h.enqueue(job("done"), job("kept"))
		d := h.take("done")
		h.recordStep(sp, d, task.Step{Seq: 1, Name: "s", Occurrence: 1, Attempt: 1, Result: json.RawMessage(`1`)})
		h.end(d, task.Success)
		k := h.take("kept")
		h.recordStep(sp, k, task.Step{Seq: 1, Name: "s", Occurrence: 1, Attempt: 1, Result: json.RawMessage(`1`)})
		h.aged(d.ID)
		h.prune(p, store.PruneRequest{Rules: keepAll(soon), Limit: 100})
		if got := h.steps(sp, d.ID); len(got) != 0 {
			t.Errorf("a pruned task's steps are still there: %+v", got)
		}
		if got := h.steps(sp, k.ID); len(got) != 1 {
			t.Errorf("a running task's steps: %+v, want its one", got)
		}
	},
}

func (h *harness) recordStep(sp store.Stepper, c task.Task, s task.Step) task.Step {
	h.t.Helper()
	got, err := sp.RecordStep(h.ctx, c.ID, c.LeaseToken, s)
	if err != nil {
		h.t.Fatalf("record step %q: %v", s.Name, err)
	}
	return got
}

func (h *harness) steps(sp store.Stepper, id int64) []task.Step {
	h.t.Helper()
	got, err := sp.Steps(h.ctx, id)
	if err != nil {
		h.t.Fatalf("steps of task %d: %v", id, err)
	}
	return got
}
