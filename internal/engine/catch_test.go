package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/decide"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// TestCatchRescuedTask: a task whose worker died, and whose policy allows
// no retry, is FAILED by the rescue; its catch task is enqueued with it.
func TestCatchRescuedTask(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	tk := enqueue(t, st, task.NewTask{Kind: "charge", Args: json.RawMessage(`{"order":"o-1"}`), Policy: "never"})
	ts, err := st.Claim(context.Background(), store.ClaimRequest{Worker: "dead", Kinds: []string{"charge"}, Limit: 1, Lease: 50 * time.Millisecond})
	if err != nil || len(ts) != 1 {
		t.Fatalf("claim: %v, %v", ts, err)
	}
	waitFor(t, 5*time.Second, func() bool {
		now, err := st.Now(context.Background())
		return err == nil && now.After(ts[0].LeaseExpires)
	}, func() string { return "the dead worker's lease did not expire" })
	never := func(context.Context, *task.Task) error { t.Error("the rescued task ran again"); return nil }
	start(t, testConfig(st), Handler{Kind: "charge", Fn: never, Catch: "refund"})
	waitState(t, st, tk.ID, task.Failed)
	got, err := st.ListTasks(context.Background(), task.Filter{Kind: "refund"})
	if err != nil || len(got) != 1 {
		t.Fatalf("catch tasks %+v (%v), want one", got, err)
	}
	var c task.Caught
	if err := json.Unmarshal(got[0].Args, &c); err != nil {
		t.Fatal(err)
	}
	if c.Task != tk.ID || c.Kind != "charge" || string(c.Args) != `{"order":"o-1"}` || c.Attempts != 1 || !strings.Contains(c.Error, "interrupted") {
		t.Errorf("caught %+v", c)
	}
	done := waitState(t, st, tk.ID, task.Failed)
	if want := CatchKey(tk.ID, done.LeaseToken); got[0].IdempotencyKey != want || done.LeaseToken == 0 {
		t.Errorf("catch task's key %q, want %q (the task and the token of the attempt that failed it)", got[0].IdempotencyKey, want)
	}
}

func TestCatchTaskArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ args, want string }{
		{`{"a":1}`, `{"a":1}`},
		{``, `null`},
		{`not json`, `"not json"`},
	} {
		f := store.Finish{TaskID: 7, Token: 9, State: task.Failed, Error: "boom"}
		decide.Catch(task.Task{ID: 7, Kind: "k", Args: json.RawMessage(tc.args), Attempt: 2, Queue: "q", Tenant: "t"}, &f, "c", "")
		n := f.Enqueue[0]
		var c task.Caught
		if err := json.Unmarshal(n.Args, &c); err != nil {
			t.Fatalf("args %q: catch args %s: %v", tc.args, n.Args, err)
		}
		if string(c.Args) != tc.want || c.Task != 7 || c.Error != "boom" || c.Attempts != 2 || n.Queue != "q" || n.Tenant != "t" || n.Kind != "c" {
			t.Errorf("args %q: catch task %+v with %+v, want args %s", tc.args, n, c, tc.want)
		}
	}
}

// refuseSuccess is a store that cannot record a success.
type refuseSuccess struct{ *sqlite.Store }

func (s refuseSuccess) Finish(ctx context.Context, fs []store.Finish) ([]error, error) {
	for _, f := range fs {
		if f.State == task.Success {
			return nil, errors.New("could not extend file: No space left on device")
		}
	}
	return s.Store.Finish(ctx, fs)
}

// TestCatchTaskFailedByItsCommitErrorHook: a policy's commit-error hook
// that fails the task (its success cannot be recorded) enqueues its catch.
func TestCatchTaskFailedByItsCommitErrorHook(t *testing.T) {
	t.Parallel()
	st := refuseSuccess{newSQLite(t)}
	p := retry.Policy{MaxAttempts: 3, OnCommitError: func(retry.Attempt, retry.Decision) retry.Decision {
		return retry.Decision{Reason: retry.ReasonPermanent}
	}}
	ok := func(context.Context, *task.Task) error { return nil }
	start(t, testConfig(st), Handler{Kind: "charge", Fn: ok, Policy: &p, Catch: "refund"})
	tk := enqueue(t, st, task.NewTask{Kind: "charge"})
	waitState(t, st, tk.ID, task.Failed)
	got, err := st.ListTasks(context.Background(), task.Filter{Kind: "refund"})
	if err != nil || len(got) != 1 || !strings.Contains(string(got[0].Args), "could not be recorded") {
		t.Fatalf("catch tasks %+v (%v), want one with the error", got, err)
	}
}

func TestCatchOfItselfIsRefused(t *testing.T) {
	t.Parallel()
	e, err := New(testConfig(newStore(t)))
	if err != nil {
		t.Fatal(err)
	}
	err = e.Register(Handler{Kind: "k", Fn: func(context.Context, *task.Task) error { return nil }, Catch: "k"})
	if err == nil || !strings.Contains(err.Error(), "its own catch") {
		t.Errorf("register: %v, want its own catch refused", err)
	}
}
