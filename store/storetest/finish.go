package storetest

import (
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

var finishTests = map[string]func(*testing.T, *harness){
	"TraceContextsTravelWithTheTask": func(t *testing.T, h *harness) {
		const enqueued = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		const first = "00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01"
		h.enqueue(task.NewTask{Kind: "traced", Trace: enqueued})
		tk := h.take("traced")
		if tk.Trace != enqueued || tk.AttemptTrace != "" {
			t.Fatalf("claimed with trace %q and attempt trace %q, want %q and none", tk.Trace, tk.AttemptTrace, enqueued)
		}
		h.finish(store.Finish{TaskID: tk.ID, Token: tk.LeaseToken, State: task.Retrying, NextAt: h.now().Add(-time.Second),
			Error: "boom", Trace: first, Attempt: task.Attempt{Outcome: task.OutcomeError, Error: "boom"}})
		tk = h.take("traced")
		if tk.Trace != enqueued || tk.AttemptTrace != first {
			t.Errorf("claimed again with trace %q and attempt trace %q, want %q and %q", tk.Trace, tk.AttemptTrace, enqueued, first)
		}
		if got := h.get(tk.ID); got.Trace != enqueued {
			t.Errorf("read with trace %q, want %q", got.Trace, enqueued)
		}
	},
	"SuccessEndsTaskAndAttempt": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.endKind("k", task.Success)
		got := h.get(c.ID)
		if got.State != task.Success || got.FinishedAt.IsZero() || got.Attempt != 1 {
			t.Errorf("task = %+v, want SUCCESS, finished, attempt 1", got)
		}
		as := h.attempts(c.ID)
		if len(as) != 1 || as[0].Outcome != task.OutcomeSuccess || as[0].EndedAt.IsZero() {
			t.Errorf("attempts = %+v, want one SUCCESS, ended", as)
		}
	},
	"SuccessKeepsItsWholeAttempt": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.take("k")
		ended := h.now().Add(time.Millisecond).Truncate(time.Microsecond)
		if err := h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Success,
			Attempt: task.Attempt{Outcome: task.OutcomeSuccess, EndedAt: ended}})[0]; err != nil {
			t.Fatalf("finish: %v", err)
		}
		got := h.get(c.ID)
		if got.LeaseOwner != "" || !got.LeaseExpires.IsZero() {
			t.Errorf("finished task holds a lease: owner %q, expires %v", got.LeaseOwner, got.LeaseExpires)
		}
		as := h.attempts(c.ID)
		if len(as) != 1 {
			t.Fatalf("attempts = %+v, want one", as)
		}
		a := as[0]
		if a.TaskID != c.ID || a.Number != 1 || a.Worker != "w1" || a.LeaseToken != c.LeaseToken ||
			a.Outcome != task.OutcomeSuccess || !a.EndedAt.Equal(ended) || a.StartedAt.IsZero() || a.StartedAt.After(ended) {
			t.Errorf("attempt = %+v, want task %d, number 1, worker w1, token %d, SUCCESS, started, ended %v",
				a, c.ID, c.LeaseToken, ended)
		}
		if a.Error != "" || a.Class != "" || a.Fingerprint != "" || a.ExitCode != nil || a.Output != "" || a.Decision != "" || a.Delay != 0 {
			t.Errorf("a plain success's attempt has a failure's fields: %+v", a)
		}
	},
	"SuccessAfterFailuresKeepsEveryAttempt": func(t *testing.T, h *harness) {
		// Successes of tasks in and out of runs, in one batch, after a
		// failed attempt each: each keeps both attempts, in order.
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a")}})
		h.enqueue(job("b"))
		var ts []task.Task
		for _, k := range []string{"a", "b"} {
			c := h.take(k)
			h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Retrying,
				Error: "e", Attempt: task.Attempt{Outcome: task.OutcomeError, Error: "e"}})
			ts = append(ts, h.take(k))
		}
		errs := h.finish(store.Finish{TaskID: ts[0].ID, Token: ts[0].LeaseToken, State: task.Success},
			store.Finish{TaskID: ts[1].ID, Token: ts[1].LeaseToken, State: task.Success})
		for i, c := range ts {
			if errs[i] != nil {
				t.Fatalf("finish %d: %v", c.ID, errs[i])
			}
			as := h.attempts(c.ID)
			if len(as) != 2 || as[0].Outcome != task.OutcomeError || as[0].Error != "e" || as[0].Number != 1 ||
				as[1].Outcome != task.OutcomeSuccess || as[1].Number != 2 || as[1].LeaseToken != c.LeaseToken || as[1].EndedAt.IsZero() {
				t.Errorf("task %d attempts = %+v, want an error then a success", c.ID, as)
			}
		}
		h.wantRunState(r.ID, task.Success)
	},
	"FailedRecordsTheFailure": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.take("k")
		exit := 3
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Failed,
			Error: "boom", Fingerprint: "fp", Streak: 1,
			Attempt: task.Attempt{Outcome: task.OutcomeError, Class: "permanent", Error: "boom",
				Fingerprint: "fp", ExitCode: &exit, Signal: "SIGTERM", Output: "tail", Decision: "fail"}})
		got := h.get(c.ID)
		if got.State != task.Failed || got.LastError != "boom" || got.Fingerprint != "fp" || got.Streak != 1 || got.FinishedAt.IsZero() {
			t.Errorf("task = %+v, want FAILED with the failure", got)
		}
		a := h.attempts(c.ID)[0]
		if a.Outcome != task.OutcomeError || a.Class != "permanent" || a.Error != "boom" || a.Fingerprint != "fp" ||
			a.ExitCode == nil || *a.ExitCode != 3 || a.Signal != "SIGTERM" || a.Output != "tail" || a.Decision != "fail" {
			t.Errorf("attempt = %+v, want the reported failure", a)
		}
	},
	"RetryingWaitsWithNextAtAndDelay": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.take("k")
		next := h.now().Add(time.Hour)
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Retrying, NextAt: next,
			PrevDelay: time.Hour, Attempt: task.Attempt{Delay: time.Hour}})
		got := h.get(c.ID)
		if got.State != task.Retrying || !near(got.NextAt, next) || got.PrevDelay != time.Hour ||
			got.Attempt != 1 || got.LeaseOwner != "" {
			t.Errorf("task = %+v, want RETRYING at %v after a 1h delay, attempt 1, no owner", got, next)
		}
		if a := h.attempts(c.ID)[0]; a.Outcome != task.OutcomeError || a.Delay != time.Hour {
			t.Errorf("attempt = %+v, want ERROR with a 1h delay", a)
		}
	},
	"SensingWithRefundUsesNoAttempt": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.take("k")
		next := h.now().Add(time.Hour)
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Sensing, NextAt: next, Refund: true})
		got := h.get(c.ID)
		if got.State != task.Sensing || got.Attempt != 0 || !near(got.NextAt, next) {
			t.Errorf("task = %+v, want SENSING, attempt 0, due at %v", got, next)
		}
		if a := h.attempts(c.ID)[0]; a.Outcome != task.OutcomeSnoozed {
			t.Errorf("attempt outcome %s, want SNOOZED", a.Outcome)
		}
	},
	"ReadyWithRefundGivesTheTaskBack": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.take("k")
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Ready, Refund: true})
		if got := h.get(c.ID); got.State != task.Ready || got.Attempt != 0 || got.LeaseOwner != "" {
			t.Errorf("task = %+v, want READY, attempt 0, no owner", got)
		}
		if a := h.attempts(c.ID)[0]; a.Outcome != task.OutcomeReleased {
			t.Errorf("attempt outcome %s, want RELEASED", a.Outcome)
		}
		if again := h.take("k"); again.ID != c.ID || again.Attempt != 1 {
			t.Errorf("claimed again %+v, want task %d at attempt 1", again, c.ID)
		}
	},
	"DeferralCountsApartFromAttempts": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		var c task.Task
		for n := 1; n <= 2; n++ {
			c = h.take("k")
			if c.Attempt != 1 || c.Deferrals != n-1 {
				t.Fatalf("claim %d: %+v, want attempt 1 after %d deferrals", n, c, n-1)
			}
			h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Retrying, NextAt: h.now(), Refund: true, Deferred: true,
				Error: "cluster full", Attempt: task.Attempt{Outcome: task.OutcomeError, Class: "resource"}})
			if got := h.get(c.ID); got.State != task.Retrying || got.Attempt != 0 || got.Deferrals != n {
				t.Fatalf("deferred %d: %+v, want RETRYING, attempt 0, %d deferrals", n, got, n)
			}
		}
		c = h.take("k")
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Retrying, NextAt: h.now(), Error: "boom"})
		if got := h.get(c.ID); got.Attempt != 1 || got.Deferrals != 2 {
			t.Errorf("after a failure: %+v, want attempt 1 and the 2 deferrals kept", got)
		}
		c = h.take("k")
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Success})
		if got := h.get(c.ID); got.State != task.Success || got.Attempt != 2 || got.Deferrals != 2 {
			t.Errorf("after success: %+v, want SUCCESS, attempt 2, 2 deferrals", got)
		}
	},
	"SnoozesAreCounted": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		for n := 0; n < 2; n++ {
			c := h.take("k")
			if c.Attempt != 1 || c.Snoozes != n {
				t.Fatalf("claim %d: %+v, want attempt 1 after %d snoozes", n+1, c, n)
			}
			h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Sensing, NextAt: h.now(), Refund: true,
				Attempt: task.Attempt{Outcome: task.OutcomeSnoozed}})
		}
		c := h.take("k")
		if c.Snoozes != 2 || c.Attempt != 1 {
			t.Fatalf("claimed after two snoozes: %+v, want attempt 1, 2 snoozes", c)
		}
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Failed, Error: "boom"})
		if got := h.get(c.ID); got.Snoozes != 2 {
			t.Errorf("after a failure: %+v, want the 2 snoozes kept", got)
		}
		if got := h.act(c.ID, task.ActRetry); got.Snoozes != 0 {
			t.Errorf("retried %+v, want its snoozes anew", got)
		}
	},
	"WaitsAreCountedNotWrittenAsAttempts": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.take("k")
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Retrying, NextAt: h.now(), Error: "boom",
			Attempt: task.Attempt{Outcome: task.OutcomeError, Error: "boom"}})
		for n := 1; n <= 3; n++ {
			c = h.take("k")
			h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Retrying, NextAt: h.now(), Waited: true,
				Error: "boom", Attempt: task.Attempt{Outcome: task.OutcomeReleased, Error: "the retry budget is spent", Decision: "budget"}})
			if got := h.get(c.ID); got.State != task.Retrying || got.Attempt != 1 || got.Waits != n || got.LastError != "boom" {
				t.Fatalf("given back %d times: %+v, want RETRYING, attempt 1, %d waits, the last error kept", n, got, n)
			}
		}
		c = h.take("k")
		if c.Attempt != 2 || c.Waits != 3 {
			t.Fatalf("claimed after three waits: %+v, want attempt 2, 3 waits", c)
		}
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Failed, Error: "bust",
			Attempt: task.Attempt{Outcome: task.OutcomeError, Error: "bust"}})
		as := h.attempts(c.ID)
		if len(as) != 2 || as[0].Error != "boom" || as[0].Number != 1 || as[1].Error != "bust" || as[1].Number != 2 {
			t.Errorf("attempts %+v, want the two failures alone: waits are no attempts", as)
		}
		if got := h.get(c.ID); got.Waits != 3 || got.Attempt != 2 {
			t.Errorf("after the last failure: %+v, want attempt 2, 3 waits", got)
		}
		if got := h.act(c.ID, task.ActRetry); got.Waits != 0 {
			t.Errorf("retried %+v, want its waits anew", got)
		}
	},
	"DeadLetterStops": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.endKind("k", task.DeadLetter)
		if got := h.get(c.ID); got.State != task.DeadLetter {
			t.Errorf("task is %s, want DEAD_LETTER", got.State)
		}
		if got := h.claim(store.ClaimRequest{Limit: 1}); len(got) != 0 {
			t.Errorf("claimed a dead letter")
		}
	},
	"StaleTokenIsLeaseLostAndWritesNothing": func(t *testing.T, h *harness) {
		h.enqueue(job("a"), job("b"))
		a, b := h.take("a"), h.take("b")
		errs := h.finish(
			store.Finish{TaskID: a.ID, Token: a.LeaseToken - 1, State: task.Success},
			store.Finish{TaskID: b.ID, Token: b.LeaseToken, State: task.Success},
		)
		wantErr(t, errs[0], task.ErrLeaseLost)
		if errs[1] != nil {
			t.Errorf("the valid item failed: %v", errs[1])
		}
		if got := h.get(a.ID); got.State != task.Running || got.LeaseToken != a.LeaseToken || got.Attempt != 1 {
			t.Errorf("stale item wrote: task = %+v", got)
		}
		if as := h.attempts(a.ID); as[0].Outcome != task.OutcomeRunning {
			t.Errorf("stale item closed the attempt: %+v", as[0])
		}
		if got := h.get(b.ID); got.State != task.Success {
			t.Errorf("valid item: task is %s, want SUCCESS", got.State)
		}
	},
	"SuccessesInAndOutOfARunAndStaleInOneBatch": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a")}})
		h.enqueue(job("plain"), job("stale"))
		a, plain, stale := h.take("a"), h.take("plain"), h.take("stale")
		errs := h.finish(
			store.Finish{TaskID: stale.ID, Token: stale.LeaseToken + 1, State: task.Success},
			store.Finish{TaskID: a.ID, Token: a.LeaseToken, State: task.Success},
			store.Finish{TaskID: plain.ID, Token: plain.LeaseToken, State: task.Success},
		)
		wantErr(t, errs[0], task.ErrLeaseLost)
		if errs[1] != nil || errs[2] != nil {
			t.Errorf("valid items failed: %v, %v", errs[1], errs[2])
		}
		h.wantStates(r.ID, map[string]task.State{"a": task.Success, "b": task.Ready})
		if got := h.get(plain.ID); got.State != task.Success {
			t.Errorf("task outside a run is %s, want SUCCESS", got.State)
		}
		if got := h.get(stale.ID); got.State != task.Running || got.LeaseToken != stale.LeaseToken {
			t.Errorf("stale item wrote: task = %+v", got)
		}
	},
	"SecondFinishIsLeaseLost": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.endKind("k", task.Success)
		errs := h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Failed})
		wantErr(t, errs[0], task.ErrLeaseLost)
		if got := h.get(c.ID); got.State != task.Success {
			t.Errorf("task is %s, want SUCCESS kept", got.State)
		}
	},
	"SameTaskTwiceInABatchAppliesOnce": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.take("k")
		errs := h.finish(
			store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Success},
			store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Failed},
		)
		if errs[0] != nil {
			t.Errorf("first item: %v", errs[0])
		}
		wantErr(t, errs[1], task.ErrLeaseLost)
		if got := h.get(c.ID); got.State != task.Success {
			t.Errorf("task is %s, want SUCCESS from the first item", got.State)
		}
	},
	"BatchAppliesEveryItem": func(t *testing.T, h *harness) {
		const n = 150
		ts := make([]task.NewTask, n)
		for i := range ts {
			ts[i] = job("k")
		}
		h.enqueue(ts...)
		claimed := h.claim(store.ClaimRequest{Limit: n})
		fs := make([]store.Finish, len(claimed))
		for i, c := range claimed {
			fs[i] = store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Success}
		}
		for i, err := range h.finish(fs...) {
			if err != nil {
				t.Errorf("item %d: %v", i, err)
			}
		}
		done, _ := h.s.ListTasks(h.ctx, task.Filter{States: []task.State{task.Success}})
		if len(done) != n {
			t.Errorf("%d tasks SUCCESS, want %d", len(done), n)
		}
	},
}
