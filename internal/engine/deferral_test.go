package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// bothStores opens each store kind for a subtest.
var bothStores = map[string]func(t *testing.T) store.Store{
	"sqlite":   func(t *testing.T) store.Store { return newSQLite(t) },
	"postgres": func(t *testing.T) store.Store { return pgtest.Open(t) },
}

// fullCluster is a process task that exits 5, which its task file calls
// resource pressure, for its first fullRuns runs, then succeeds; each run
// appends a line to the file runs.
func fullCluster(t *testing.T, fullRuns int) (task.Exec, string) {
	runs := filepath.Join(t.TempDir(), "runs")
	return task.Exec{
		Shell: "echo run >> " + runs + "; [ $(wc -l < " + runs + ") -le " + strconv.Itoa(fullRuns) + " ] && " +
			"{ echo '0/3 nodes are available: insufficient cpu' >&2; exit 5; }; exit 0",
		ResourceOnExit: []int{5},
	}, runs
}

func runsOf(t *testing.T, file string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// TestNeverIsDeferredOnAFullCluster: a task whose policy is "never" is
// not failed when its cluster is full: it is deferred, with the default
// resource backoff (60s for the first deferral), its attempt given back
// and its deferral counted, on either store.
func TestNeverIsDeferredOnAFullCluster(t *testing.T) {
	t.Parallel()
	for name, open := range bothStores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			x, runs := fullCluster(t, 1)
			tk := enqueue(t, st, task.NewTask{Kind: "exec", Policy: "never", Args: execArgs(t, x)})
			before := time.Now()
			start(t, testConfig(st))
			got := waitState(t, st, tk.ID, task.Retrying, task.Failed)
			if got.State != task.Retrying || got.Attempt != 0 || got.Deferrals != 1 {
				t.Fatalf("task %+v, want RETRYING, attempt 0 (given back), 1 deferral", got)
			}
			if wait := got.NextAt.Sub(before); wait < 55*time.Second || wait > 65*time.Second {
				t.Errorf("deferred until %v after the start, want the default resource backoff, 60s", wait.Round(time.Millisecond))
			}
			as := attempts(t, st, tk.ID)
			if len(as) != 1 || as[0].Class != "resource" || as[0].Decision != "retry" || as[0].Delay != time.Minute {
				t.Errorf("attempts %+v, want one, resource, retried after 1m", as)
			}
			if n := runsOf(t, runs); n != 1 {
				t.Errorf("%d runs, want 1", n)
			}
		})
	}
}

// TestDeferralsUseNoAttempt: three deferrals of a task under "never" with
// a quick resource schedule, then it runs and succeeds on its one
// attempt; the claim carries the count (the deciding worker reads it from
// there, so the backoff grows by deferral), on either store.
func TestDeferralsUseNoAttempt(t *testing.T) {
	t.Parallel()
	for name, open := range bothStores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			x, runs := fullCluster(t, 3)
			tk := enqueue(t, st, task.NewTask{Kind: "exec", Policy: "never resource=5,20ms,80ms,none", Args: execArgs(t, x)})
			start(t, testConfig(st))
			got := waitState(t, st, tk.ID, task.Success, task.Failed)
			if got.State != task.Success || got.Attempt != 1 || got.Deferrals != 3 {
				t.Fatalf("task %+v, want SUCCESS on attempt 1 after 3 deferrals", got)
			}
			if n := runsOf(t, runs); n != 4 {
				t.Errorf("%d runs, want 4", n)
			}
			var delays []time.Duration
			for _, a := range attempts(t, st, tk.ID) {
				if a.Class == "resource" {
					delays = append(delays, a.Delay)
				}
			}
			if want := []time.Duration{20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond}; !slices.Equal(delays, want) {
				t.Errorf("deferred by %v, want %v: the resource backoff by deferral", delays, want)
			}
		})
	}
}

// TestDeferralsHaveACeiling: a cluster that stays full ends the task,
// FAILED (exhausted), at the resource failure after its last deferral.
func TestDeferralsHaveACeiling(t *testing.T) {
	t.Parallel()
	for name, open := range bothStores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			x, runs := fullCluster(t, 1000)
			tk := enqueue(t, st, task.NewTask{Kind: "exec", Policy: "3 10ms resource=2,10ms", Args: execArgs(t, x)})
			start(t, testConfig(st))
			got := waitState(t, st, tk.ID, task.Failed, task.DeadLetter)
			if got.State != task.Failed || got.Deferrals != 2 || got.Attempt != 1 {
				t.Fatalf("task %+v, want FAILED after 2 deferrals, on attempt 1", got)
			}
			if n := runsOf(t, runs); n != 3 {
				t.Errorf("%d runs, want 3", n)
			}
			as := attempts(t, st, tk.ID)
			if last := as[len(as)-1]; last.Decision != retry.ReasonExhausted.String() || last.Class != "resource" {
				t.Errorf("last attempt %+v, want resource, exhausted", last)
			}
		})
	}
}
