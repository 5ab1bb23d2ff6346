package storetest

import (
	"testing"

	"github.com/grit-run/grit/task"
)

var dagTests = map[string]func(*testing.T, *harness){
	"FanOutReleasesEveryDependent": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a"), node("c", "a")}})
		h.endKind("a", task.Success)
		h.wantStates(r.ID, map[string]task.State{"b": task.Ready, "c": task.Ready})
	},
	"FanInWaitsForEveryNeed": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b"), node("c", "a", "b")}})
		h.endKind("a", task.Success)
		h.wantStates(r.ID, map[string]task.State{"c": task.Pending})
		h.endKind("b", task.Success)
		h.wantStates(r.ID, map[string]task.State{"c": task.Ready})
	},
	"SkippedNeedCountsAsSatisfied": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b"), node("c", "a", "b")}})
		h.endKind("a", task.Success)
		b := h.endKind("b", task.DeadLetter)
		h.wantStates(r.ID, map[string]task.State{"c": task.Pending})
		if _, err := h.s.Act(h.ctx, b.ID, task.ActSkip); err != nil {
			t.Fatalf("skip: %v", err)
		}
		h.wantStates(r.ID, map[string]task.State{"b": task.Skipped, "c": task.Ready})
	},
	"ReleasedDependentIsDueAtOnce": func(t *testing.T, h *harness) {
		h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a")}})
		h.endKind("a", task.Success)
		h.take("b")
	},
	"FailurePropagatesUpstreamFailedTransitively": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{
			node("a"), node("b", "a"), node("c", "b"), node("d", "c"), node("x"),
		}})
		h.endKind("a", task.Failed)
		h.wantStates(r.ID, map[string]task.State{
			"b": task.UpstreamFailed, "c": task.UpstreamFailed, "d": task.UpstreamFailed, "x": task.Ready,
		})
	},
	"FailureReachesFanInThroughAnyNeed": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b"), node("c", "a", "b")}})
		h.endKind("a", task.Success)
		h.endKind("b", task.Failed)
		h.wantStates(r.ID, map[string]task.State{"c": task.UpstreamFailed})
	},
	"DeadLetterHoldsDependentsPending": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a"), node("c", "b")}})
		h.endKind("a", task.DeadLetter)
		h.wantStates(r.ID, map[string]task.State{"a": task.DeadLetter, "b": task.Pending, "c": task.Pending})
		h.wantRunState(r.ID, task.Running)
	},
	"RetryHoldsDependentsPending": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a")}})
		h.endKind("a", task.Retrying)
		h.wantStates(r.ID, map[string]task.State{"b": task.Pending})
	},
}
