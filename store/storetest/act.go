package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func (h *harness) act(id int64, a task.Action) task.Task {
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
		got := h.act(c.ID, task.ActReplay)
		if got.State != task.Ready || got.Streak != 0 || got.Attempt != 1 {
			t.Errorf("replayed %+v, want READY, streak 0, attempt 1", got)
		}
		if again := h.take("k"); again.ID != c.ID || again.Attempt != 2 {
			t.Errorf("claimed %+v, want task %d at attempt 2", again, c.ID)
		}
	},
	"RetryRunsAFailedTaskAnew": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.take("k")
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Retrying, NextAt: h.now(), Refund: true, Deferred: true, Error: "full"})
		c = h.take("k")
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Failed, Error: "boom", Fingerprint: "fp", Streak: 1})
		got := h.act(c.ID, task.ActRetry)
		if got.State != task.Ready || got.Attempt != 0 || got.Deferrals != 0 || got.Streak != 0 || !got.FinishedAt.IsZero() {
			t.Errorf("retried %+v, want READY with its attempts and deferrals anew", got)
		}
		if again := h.take("k"); again.ID != c.ID || again.Attempt != 1 {
			t.Errorf("claimed %+v, want task %d at attempt 1", again, c.ID)
		}
		if n := len(h.attempts(c.ID)); n != 3 {
			t.Errorf("%d attempts, want the two before the retry kept and the one running", n)
		}
		// A cancelled task too; a task that has not ended, or a run's
		// task, is refused with its state.
		x := h.enqueue(job("x"))[0]
		h.act(x.ID, task.ActCancel)
		if got := h.act(x.ID, task.ActRetry); got.State != task.Ready {
			t.Errorf("a cancelled task retried is %s", got.State)
		}
		_, err := h.s.Act(h.ctx, x.ID, task.ActRetry)
		var wrong *task.StateError
		if !errors.As(err, &wrong) || wrong.State != task.Ready {
			t.Errorf("retry of a READY task: %v, want a state error saying READY", err)
		}
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a")}})
		a := h.endKind("a", task.DeadLetter)
		h.act(a.ID, task.ActFail)
		_, err = h.s.Act(h.ctx, a.ID, task.ActRetry)
		if !errors.As(err, &wrong) || wrong.State != task.Failed || !strings.Contains(err.Error(), "run") {
			t.Errorf("retry of a run's FAILED task: %v, want a state error saying it belongs to a run", err)
		}
		h.wantRunState(r.ID, task.Failed)
	},
	"SkipLetsDependentsGoOn": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a")}})
		a := h.endKind("a", task.DeadLetter)
		if got := h.act(a.ID, task.ActSkip); got.State != task.Skipped {
			t.Errorf("skipped task is %s", got.State)
		}
		h.wantStates(r.ID, map[string]task.State{"b": task.Ready})
	},
	"FailFailsDependentsAndRun": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a"), node("c", "b")}})
		a := h.endKind("a", task.DeadLetter)
		h.act(a.ID, task.ActFail)
		h.wantStates(r.ID, map[string]task.State{"a": task.Failed, "b": task.UpstreamFailed, "c": task.UpstreamFailed})
		h.wantRunState(r.ID, task.Failed)
	},
	"CancelCancelsDependentsTransitively": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a"), node("c", "b")}})
		ts, _ := h.s.ListTasks(h.ctx, task.Filter{RunID: r.ID, Kind: "a"})
		h.act(ts[0].ID, task.ActCancel)
		h.wantStates(r.ID, map[string]task.State{"a": task.Cancelled, "b": task.Cancelled, "c": task.Cancelled})
		h.wantRunState(r.ID, task.Cancelled)
	},
	"CancelRunningTaskFencesItsWorker": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.take("k")
		if got := h.act(c.ID, task.ActCancel); got.State != task.Cancelled || got.FinishedAt.IsZero() {
			t.Errorf("cancelled %+v, want CANCELLED, finished", got)
		}
		wantErr(t, h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Success})[0], task.ErrLeaseLost)
		if as := h.attempts(c.ID); as[0].Outcome == task.OutcomeRunning || as[0].EndedAt.IsZero() {
			t.Errorf("attempt of a cancelled task = %+v, want it closed", as[0])
		}
	},
	"CancelClosesTheRunningAttemptOnce": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.take("k")
		open := h.attempts(c.ID)
		h.act(c.ID, task.ActCancel)
		as := h.attempts(c.ID)
		if len(as) != 1 || as[0].Outcome != task.OutcomeInterrupted || as[0].Decision != "cancelled" ||
			as[0].LeaseToken != c.LeaseToken || as[0].Worker != "w1" || !as[0].StartedAt.Equal(open[0].StartedAt) || as[0].EndedAt.IsZero() {
			t.Errorf("attempts of a cancelled task = %+v, want the open one %+v, INTERRUPTED, cancelled, ended", as, open[0])
		}
	},
	"ActionInWrongStateIsRejected": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.endKind("k", task.Success)
		for _, a := range []task.Action{task.ActSkip, task.ActReplay, task.ActFail, task.ActCancel} {
			_, err := h.s.Act(h.ctx, c.ID, a)
			wantErr(t, err, task.ErrWrongState)
		}
		r := h.enqueue(job("r"))[0]
		_, err := h.s.Act(h.ctx, r.ID, task.ActReplay)
		wantErr(t, err, task.ErrWrongState)
		if got := h.get(c.ID); got.State != task.Success {
			t.Errorf("task is %s, want SUCCESS kept", got.State)
		}
	},
	"UnknownTaskIsNotFound": func(t *testing.T, h *harness) {
		_, err := h.s.Act(h.ctx, 999, task.ActCancel)
		wantErr(t, err, task.ErrNotFound)
	},
}
