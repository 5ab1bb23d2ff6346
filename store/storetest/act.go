package storetest

import (
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func (h *harness) act(id int64, a store.Action) task.Task {
	h.t.Helper()
	t, err := h.s.Act(h.ctx, id, a)
	if err != nil {
		h.t.Fatalf("%s task %d: %v", a, id, err)
	}
	return t
}

var actTests = map[string]func(*testing.T, *harness){
	"ReplayMakesDeadLetterReadyKeepingAttempts": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.take("k")
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.DeadLetter, Fingerprint: "fp", Streak: 2})
		got := h.act(c.ID, store.ActReplay)
		if got.State != task.Ready || got.Streak != 0 || got.Attempt != 1 {
			t.Errorf("replayed %+v, want READY, streak 0, attempt 1", got)
		}
		if again := h.take("k"); again.ID != c.ID || again.Attempt != 2 {
			t.Errorf("claimed %+v, want task %d at attempt 2", again, c.ID)
		}
	},
	"SkipLetsDependentsGoOn": func(t *testing.T, h *harness) {
		r := h.submit(store.NewRun{Name: "r", Tasks: []store.NewTask{node("a"), node("b", "a")}})
		a := h.endKind("a", task.DeadLetter)
		if got := h.act(a.ID, store.ActSkip); got.State != task.Skipped {
			t.Errorf("skipped task is %s", got.State)
		}
		h.wantStates(r.ID, map[string]task.State{"b": task.Ready})
	},
	"FailFailsDependentsAndRun": func(t *testing.T, h *harness) {
		r := h.submit(store.NewRun{Name: "r", Tasks: []store.NewTask{node("a"), node("b", "a"), node("c", "b")}})
		a := h.endKind("a", task.DeadLetter)
		h.act(a.ID, store.ActFail)
		h.wantStates(r.ID, map[string]task.State{"a": task.Failed, "b": task.UpstreamFailed, "c": task.UpstreamFailed})
		h.wantRunState(r.ID, task.Failed)
	},
	"CancelCancelsDependentsTransitively": func(t *testing.T, h *harness) {
		r := h.submit(store.NewRun{Name: "r", Tasks: []store.NewTask{node("a"), node("b", "a"), node("c", "b")}})
		ts, _ := h.s.ListTasks(h.ctx, store.Filter{RunID: r.ID, Kind: "a"})
		h.act(ts[0].ID, store.ActCancel)
		h.wantStates(r.ID, map[string]task.State{"a": task.Cancelled, "b": task.Cancelled, "c": task.Cancelled})
		h.wantRunState(r.ID, task.Cancelled)
	},
	"CancelRunningTaskFencesItsWorker": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.take("k")
		if got := h.act(c.ID, store.ActCancel); got.State != task.Cancelled || got.FinishedAt.IsZero() {
			t.Errorf("cancelled %+v, want CANCELLED, finished", got)
		}
		wantErr(t, h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Success})[0], task.ErrLeaseLost)
		if as := h.attempts(c.ID); as[0].Outcome == task.OutcomeRunning || as[0].EndedAt.IsZero() {
			t.Errorf("attempt of a cancelled task = %+v, want it closed", as[0])
		}
	},
	"ActionInWrongStateIsRejected": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.endKind("k", task.Success)
		for _, a := range []store.Action{store.ActSkip, store.ActReplay, store.ActFail, store.ActCancel} {
			_, err := h.s.Act(h.ctx, c.ID, a)
			wantErr(t, err, task.ErrWrongState)
		}
		r := h.enqueue(job("r"))[0]
		_, err := h.s.Act(h.ctx, r.ID, store.ActReplay)
		wantErr(t, err, task.ErrWrongState)
		if got := h.get(c.ID); got.State != task.Success {
			t.Errorf("task is %s, want SUCCESS kept", got.State)
		}
	},
	"UnknownTaskIsNotFound": func(t *testing.T, h *harness) {
		_, err := h.s.Act(h.ctx, 999, store.ActCancel)
		wantErr(t, err, task.ErrNotFound)
	},
}
