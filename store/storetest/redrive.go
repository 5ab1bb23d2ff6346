package storetest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// redrive redrives a run and checks it is RUNNING after.
func (h *harness) redrive(runID int64) task.Redriven {
	h.t.Helper()
	r, err := h.s.Redrive(h.ctx, runID)
	if err != nil {
		h.t.Fatalf("redrive run %d: %v", runID, err)
	}
	if r.Run.ID != runID || r.Run.State != task.Running || !r.Run.FinishedAt.IsZero() {
		h.t.Errorf("redriven run %+v, want run %d RUNNING without FinishedAt", r.Run, runID)
	}
	return r
}

// idsOf returns the ids of a run's tasks by name, in id order.
func (h *harness) idsOf(runID int64, names ...string) []int64 {
	h.t.Helper()
	ts, err := h.s.ListTasks(h.ctx, task.Filter{RunID: runID})
	if err != nil {
		h.t.Fatalf("list tasks of run %d: %v", runID, err)
	}
	var out []int64
	for _, t := range ts {
		if slices.Contains(names, t.Name) {
			out = append(out, t.ID)
		}
	}
	slices.Sort(out)
	return out
}

// refused checks that a redrive of runID is refused for the run's state,
// saying want, and leaves the run and its tasks as they were.
func (h *harness) refused(runID int64, state task.State, want string) {
	h.t.Helper()
	before := h.states(runID)
	_, err := h.s.Redrive(h.ctx, runID)
	var wrong *task.StateError
	if !errors.As(err, &wrong) || wrong.State != state || !strings.Contains(err.Error(), want) {
		h.t.Errorf("redrive of a %s run: %v, want a *task.StateError with state %s saying %q", state, err, state, want)
	}
	h.wantRunState(runID, state)
	h.wantStates(runID, before)
}

var redriveTests = map[string]func(*testing.T, *harness){
	"RerunsOnlyWhatDidNotSucceed": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a"), node("c", "b"), node("d")}})
		h.endKind("a", task.Success)
		b := h.take("b")
		h.finish(store.Finish{TaskID: b.ID, Token: b.LeaseToken, State: task.Retrying, NextAt: h.now(), Error: "boom", Fingerprint: "fp", Streak: 1})
		h.waitPast(h.get(b.ID).NextAt)
		b = h.take("b")
		h.finish(store.Finish{TaskID: b.ID, Token: b.LeaseToken, State: task.Failed, Error: "boom", Fingerprint: "fp", Streak: 2})
		h.endKind("d", task.Success)
		h.wantRunState(r.ID, task.Failed)
		h.wantStates(r.ID, map[string]task.State{"c": task.UpstreamFailed})

		got := h.redrive(r.ID)
		if want := h.idsOf(r.ID, "b", "c"); !slices.Equal(got.Tasks, want) {
			t.Errorf("redrove tasks %v, want b and c, %v", got.Tasks, want)
		}
		h.wantStates(r.ID, map[string]task.State{"a": task.Success, "b": task.Ready, "c": task.Pending, "d": task.Success})
		if again := h.get(b.ID); again.Attempt != 0 || again.Streak != 0 || !again.FirstStartedAt.IsZero() || !again.FinishedAt.IsZero() {
			t.Errorf("redriven %+v, want fresh attempts: attempt 0, streak 0, not started, not finished", again)
		}
		if n := len(h.attempts(b.ID)); n != 2 {
			t.Errorf("b has %d attempts on record after the redrive, want its 2 kept", n)
		}
		if b = h.take("b"); b.Attempt != 1 {
			t.Errorf("b claimed at attempt %d after the redrive, want 1", b.Attempt)
		}
		h.end(b, task.Success)
		h.wantStates(r.ID, map[string]task.State{"c": task.Ready})
		h.wantRunState(r.ID, task.Running)
		h.endKind("c", task.Success)
		if run := h.wantRunState(r.ID, task.Success); run.FinishedAt.IsZero() {
			t.Errorf("the redriven run ended without FinishedAt")
		}
	},
	"TakesDeadLettersAndWhatTheRunCancelled": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", MaxFailures: 1, Tasks: []task.NewTask{
			node("a"), node("b"), node("c"), node("d", "c"), node("e"),
		}})
		e := h.take("e") // started: the run's failure does not cancel it
		h.endKind("a", task.Failed)
		h.endKind("b", task.Failed)
		h.end(e, task.DeadLetter)
		h.wantRunState(r.ID, task.Failed)
		h.wantStates(r.ID, map[string]task.State{"c": task.Cancelled, "d": task.Cancelled, "e": task.DeadLetter})

		got := h.redrive(r.ID)
		if want := h.idsOf(r.ID, "a", "b", "c", "d", "e"); !slices.Equal(got.Tasks, want) {
			t.Errorf("redrove tasks %v, want every task, %v", got.Tasks, want)
		}
		h.wantStates(r.ID, map[string]task.State{"a": task.Ready, "b": task.Ready, "c": task.Ready, "d": task.Pending, "e": task.Ready})
		for _, k := range []string{"a", "b", "c", "e"} {
			h.endKind(k, task.Success)
		}
		h.endKind("d", task.Success)
		h.wantRunState(r.ID, task.Success)
	},
	"LeavesAnOperatorsCancel": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("x"), node("c", "a", "x"), node("y"), node("z", "y")}})
		h.endKind("a", task.Failed) // c: UPSTREAM_FAILED
		h.act(h.idsOf(r.ID, "x")[0], task.ActCancel)
		h.act(h.idsOf(r.ID, "y")[0], task.ActCancel) // z: CANCELLED with it
		h.wantRunState(r.ID, task.Failed)

		got := h.redrive(r.ID)
		if want := h.idsOf(r.ID, "a"); !slices.Equal(got.Tasks, want) {
			t.Errorf("redrove tasks %v, want a alone, %v: c needs x, which an operator cancelled", got.Tasks, want)
		}
		h.wantStates(r.ID, map[string]task.State{"a": task.Ready, "x": task.Cancelled, "c": task.Cancelled, "y": task.Cancelled, "z": task.Cancelled})
		h.endKind("a", task.Success)
		h.wantRunState(r.ID, task.Cancelled)
	},
	"RefusedOnARunningRun": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b")}})
		h.endKind("a", task.Failed)
		h.refused(r.ID, task.Running, "only a run that has ended can be redriven")
		h.endKind("b", task.DeadLetter) // a dead letter holds the run open
		h.refused(r.ID, task.Running, "grit dlq")
	},
	"RefusedOnASucceededRun": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a")}})
		h.endKind("a", task.Success)
		h.refused(r.ID, task.Success, "nothing to redrive")
	},
	"RefusedWhenAnOperatorCancelledAll": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a")}})
		h.act(h.idsOf(r.ID, "a")[0], task.ActCancel)
		h.wantRunState(r.ID, task.Cancelled)
		h.refused(r.ID, task.Cancelled, "an operator cancelled them")
	},
	"OfAMissingRun": func(t *testing.T, h *harness) {
		_, err := h.s.Redrive(h.ctx, 424242)
		wantErr(t, err, task.ErrNotFound)
	},
}
