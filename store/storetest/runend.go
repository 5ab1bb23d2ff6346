package storetest

import (
	"testing"

	"github.com/grit-run/grit/task"
)

var runEndTests = map[string]func(*testing.T, *harness){
	"SucceedsWhenEveryTaskSucceeded": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a")}})
		h.endKind("a", task.Success)
		h.wantRunState(r.ID, task.Running)
		h.endKind("b", task.Success)
		if got := h.wantRunState(r.ID, task.Success); got.FinishedAt.IsZero() {
			t.Errorf("ended run has no FinishedAt")
		}
	},
	"SucceedsWithSkippedTasks": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a")}})
		a := h.endKind("a", task.DeadLetter)
		if _, err := h.s.Act(h.ctx, a.ID, task.ActSkip); err != nil {
			t.Fatalf("skip: %v", err)
		}
		h.endKind("b", task.Success)
		h.wantRunState(r.ID, task.Success)
	},
	"FailsWhenATaskFailed": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a"), node("c")}})
		h.endKind("a", task.Failed)
		h.wantRunState(r.ID, task.Running) // c has not ended
		h.endKind("c", task.Success)
		if got := h.wantRunState(r.ID, task.Failed); got.FinishedAt.IsZero() {
			t.Errorf("ended run has no FinishedAt")
		}
	},
	"MaxFailuresToleratesUpToTheLimit": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", MaxFailures: 1, Tasks: []task.NewTask{node("a"), node("b")}})
		h.endKind("a", task.Failed)
		h.wantRunState(r.ID, task.Running)
		h.wantStates(r.ID, map[string]task.State{"b": task.Ready})
	},
	"MaxFailuresPassedFailsRunAndCancelsUnstarted": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", MaxFailures: 1, Tasks: []task.NewTask{
			node("a"), node("b"), node("c"), node("d", "c"), node("e"),
		}})
		h.take("c") // started: keeps running
		h.endKind("a", task.Failed)
		h.endKind("b", task.Failed)
		if got := h.wantRunState(r.ID, task.Failed); got.FinishedAt.IsZero() {
			t.Errorf("failed run has no FinishedAt")
		}
		h.wantStates(r.ID, map[string]task.State{"c": task.Running, "d": task.Cancelled, "e": task.Cancelled})
	},
}
