package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/autotimeout"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// The seed's warning as a test: a kind with enough successful runs of
// about T, then a night when its runs take 4T. Under an auto timeout
// (5 × p99) they finish; under a fixed timeout of 2T the same work is cut
// off. A run that hangs is still cut off under the auto timeout, which
// the error explains.
func TestAutoTimeoutSlowNightSQLite(t *testing.T) {
	t.Parallel()
	slowNight(t, newStore(t))
}

func TestAutoTimeoutSlowNightPostgres(t *testing.T) {
	t.Parallel()
	slowNight(t, pgtest.Open(t))
}

func slowNight(t *testing.T, st store.Store) {
	const T = 200 * time.Millisecond
	cfg := testConfig(st)
	cfg.Concurrency = 16
	cfg.AutoTimeouts = AutoTimeouts{Factor: 5, Floor: time.Millisecond, Ceiling: time.Minute, MinRuns: 10, Default: time.Minute, Refresh: time.Nanosecond}
	var mu sync.Mutex
	seen := map[int64]HandlerAttempt{}
	start(t, cfg, Handler{Kind: "nightly", Timeout: task.AutoTimeout, Policy: &retry.Never,
		Fn: func(ctx context.Context, tk *task.Task) error {
			a, _ := AttemptFrom(ctx)
			mu.Lock()
			seen[tk.ID] = a
			mu.Unlock()
			var d time.Duration
			if err := json.Unmarshal(tk.Args, &d); err != nil {
				return err
			}
			select { // the work: it takes d unless cut off
			case <-time.After(d):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}})
	run := func(d, timeout time.Duration, n int) []task.Task {
		ids := make([]int64, n)
		for i := range ids {
			args, _ := json.Marshal(d)
			ids[i] = enqueue(t, st, task.NewTask{Kind: "nightly", Args: args, Timeout: timeout}).ID
		}
		out := make([]task.Task, n)
		for i, id := range ids {
			out[i] = waitState(t, st, id, task.Success, task.Failed)
		}
		return out
	}
	attemptOf := func(id int64) HandlerAttempt {
		mu.Lock()
		defer mu.Unlock()
		return seen[id]
	}

	// Usual nights: ten runs of T, under the stated default.
	for _, tk := range run(T, 0, 10) {
		if tk.State != task.Success {
			t.Fatalf("usual run: %s %s", tk.State, tk.LastError)
		}
		// Fewer than 10 runs were on record when each started (how many
		// depends on how the claims fell).
		if a := attemptOf(tk.ID); a.Timeout != time.Minute || !strings.HasPrefix(a.TimeoutSource, "auto: default, ") {
			t.Errorf("first runs: timeout %v (%s), want the default 1m (auto: default, N runs so far)", a.Timeout, a.TimeoutSource)
		}
	}

	// The slow night: runs take 4T. The auto timeout (5 × p99 ≥ 5T) lets
	// them finish, at their first attempt.
	for _, tk := range run(4*T, 0, 4) {
		a := attemptOf(tk.ID)
		if tk.State != task.Success || tk.Attempt != 1 {
			t.Errorf("slow run under auto: %s after %d attempts (%s); timeout %v (%s)", tk.State, tk.Attempt, tk.LastError, a.Timeout, a.TimeoutSource)
		}
		if a.Timeout < 5*T || !strings.HasPrefix(a.TimeoutSource, "auto: 5 × p99 ") || !strings.HasSuffix(a.TimeoutSource, " of 10 runs") {
			t.Errorf("slow run: timeout %v (%s), want 5 × the p99 of the 10 usual runs", a.Timeout, a.TimeoutSource)
		}
		// A success's record keeps no timeout: it is a plain success,
		// written on the task row alone (autotimeout.Keep).
		if as := attempts(t, st, tk.ID); len(as) != 1 || as[0].Timeout != 0 || as[0].TimeoutSource != "" {
			t.Errorf("slow run's attempts %+v, want a success with no timeout kept", as)
		}
	}

	// The same night under a fixed timeout of 2T: dead on the first try.
	for _, tk := range run(4*T, 2*T, 1) {
		as := attempts(t, st, tk.ID)
		if tk.State != task.Failed || len(as) != 1 || as[0].Outcome != task.OutcomeTimeout {
			t.Fatalf("slow run under a fixed 2T: %s, attempts %+v; want FAILED by a timeout", tk.State, as)
		}
		if want := fmt.Sprintf("timed out after %s", retry.FormatDuration(2*T)); !strings.Contains(as[0].Error, want) {
			t.Errorf("fixed timeout's error %q, want %q", as[0].Error, want)
		}
	}

	// A hang is still cut off under auto, and the error says how the
	// timeout was chosen.
	for _, tk := range run(time.Hour, 0, 1) {
		as := attempts(t, st, tk.ID)
		if tk.State != task.Failed || len(as) != 1 || as[0].Outcome != task.OutcomeTimeout {
			t.Fatalf("hang under auto: %s, attempts %+v; want FAILED by a timeout", tk.State, as)
		}
		if !strings.Contains(as[0].Error, "(auto: 5 × p99 ") || !strings.HasPrefix(as[0].TimeoutSource, "auto: 5 × p99 ") {
			t.Errorf("auto timeout's error %q does not say how it was chosen", as[0].Error)
		}
		// The timed-out attempt keeps the timeout it ran under, and why.
		if as[0].Timeout < 5*T {
			t.Errorf("hang's attempt keeps timeout %v, want 5 × the p99 (≥ %v)", as[0].Timeout, 5*T)
		}
	}
}

// TestAutoTimeoutCached: the store is asked for a kind's durations once
// per Refresh, not once per attempt.
func TestAutoTimeoutCached(t *testing.T) {
	t.Parallel()
	st := &countingDurations{Store: newSQLite(t)}
	cfg := testConfig(st)
	cfg.AutoTimeouts = AutoTimeouts{Refresh: time.Hour}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.runCtx = context.Background()
	h := &Handler{Kind: "k", Timeout: task.AutoTimeout}
	for range 50 {
		if d, _ := e.timeoutFor(&task.Task{Kind: "k"}, h); d != autotimeout.DefaultDefault {
			t.Fatalf("timeout %v, want the default", d)
		}
	}
	e.timeoutFor(&task.Task{Kind: "other"}, h)
	if d, src := e.timeoutFor(&task.Task{Kind: "k", Timeout: time.Second}, h); d != time.Second || src != "task" {
		t.Errorf("a task's own timeout: %v (%s)", d, src)
	}
	if n := st.calls.get(); n != 2 {
		t.Errorf("%d queries for 51 attempts of two kinds, want 2", n)
	}
}

type countingDurations struct {
	*sqlite.Store
	calls counter
}

func (c *countingDurations) SuccessDurations(ctx context.Context, kind, name string, limit int) ([]time.Duration, error) {
	c.calls.inc()
	return c.Store.SuccessDurations(ctx, kind, name, limit)
}
