package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// budgetTasks is how many tasks the retry budget test works, and
// budgetWindow how long (by the store's clock, from the first attempt) it
// counts their retries.
const (
	budgetTasks  = 50
	budgetWindow = 5 * time.Second
)

// TestWorkerRetryBudget runs grit worker, as a process, on tasks of one
// group that always fail transiently (exit 75: retried, never poison)
// with a policy that retries every 10ms, once with a tight retry budget
// and once with a loose one: the tight one lets through no more retries
// than its burst and floor allow, the loose one far more. On SQLite and
// on PostgreSQL.
func TestWorkerRetryBudget(t *testing.T) {
	t.Parallel()
	stores := map[string]func(*testing.T) string{
		"sqlite":   tempStore,
		"postgres": func(t *testing.T) string { return pgtest.WithSchema(pgtest.NewSchema(t)) },
	}
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			newStore := stores[name]
			tight := budgetRun(t, newStore(t), "0,0.5,1")
			loose := budgetRun(t, newStore(t), "100,1000,1000")
			t.Logf("in %v: tight budget 0,0.5,1: %d retries ran (%d refused in all); loose budget 100,1000,1000: %d ran (%d refused)",
				budgetWindow, tight.ran, tight.refused, loose.ran, loose.refused)
			// A burst of 1 and half a retry a second over the window, and
			// one for the store's and the worker's clocks to differ.
			most := 1 + int(0.5*budgetWindow.Seconds()) + 1
			if tight.ran > most {
				t.Errorf("tight budget: %d retries ran in %v, want at most %d", tight.ran, budgetWindow, most)
			}
			if tight.refused < budgetTasks-1 {
				t.Errorf("tight budget: %d retries refused, want at least %d (every task's retry but the burst's)", tight.refused, budgetTasks-1)
			}
			if loose.ran < 10*most {
				t.Errorf("loose budget: %d retries ran in %v, want at least %d, ten times what the tight budget allows", loose.ran, budgetWindow, 10*most)
			}
		})
	}
}

// budgetCount is what the store shows of the retries: those that ran in
// the window, and those the budget refused in the whole run.
type budgetCount struct {
	ran, refused int
}

// budgetRun submits the failing tasks to a fresh store, works them with a
// grit worker process under the retry budget, and counts the retries that
// ran in budgetWindow once every task had failed once, and those the
// budget refused (gave back, using no attempt).
func budgetRun(t *testing.T, dsn, budget string) budgetCount {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("name: budget\ndefaults:\n  group: flaky-api\n  retry: \"1000 10ms 10ms\"\ntasks:\n")
	for i := range budgetTasks {
		fmt.Fprintf(&b, "  t%02d: {run: exit 75}\n", i)
	}
	file := filepath.Join(dir, "tasks.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := grit(t, "submit", "--store", dsn, file); code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	ctx := t.Context()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	// The group's breaker would open on so many failures and hold it back
	// under either budget: min-attempts keeps it closed; and every task
	// failing alike, none succeeding, is an outage: the hold is off.
	worker, out := gritProcess(t, dir, "worker", "--store", dsn, "--concurrency", fmt.Sprint(budgetTasks), "--drain", "5s",
		"--retry-budget", budget, "--breaker", "min-attempts=1000000", "--outage-tasks", "off")
	// The window opens once every task's first attempt has failed, so
	// that every task is retrying: how long the first attempts take (50
	// processes at once, on a busy machine) does not count.
	poll.Until(t, 90*time.Second, "every task's first attempt to fail", func() bool {
		ts := runTasks(t, st)
		for _, tk := range ts {
			if tk.Attempt < 2 && (tk.Attempt < 1 || tk.State != task.Retrying) {
				return false
			}
		}
		return len(ts) == budgetTasks
	})
	from, err := st.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	to := from.Add(budgetWindow)
	poll.Until(t, budgetWindow+30*time.Second, "the window to pass, by the store's clock", func() bool {
		now, err := st.Now(ctx)
		return err == nil && !now.Before(to)
	})
	if err := worker.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, worker, 60*time.Second, out); code != 0 {
		t.Fatalf("worker exited %d:\n%s", code, out)
	}
	c := countRetries(t, ctx, st, from, to)
	showsWaits(t, dsn, runTasks(t, st))
	return c
}

// showsWaits checks that grit task shows a task's waits, when one has.
func showsWaits(t *testing.T, dsn string, ts []task.Task) {
	t.Helper()
	for _, tk := range ts {
		if tk.Waits == 0 {
			continue
		}
		want := regexp.MustCompile(fmt.Sprintf(`\nwaits +%d \(claims given back before they began`, tk.Waits))
		if code, out, errOut := grit(t, "task", "--store", dsn, fmt.Sprint(tk.ID)); code != 0 || !want.MatchString(out) {
			t.Errorf("grit task %d: exit %d: %s %s; want it to say %q", tk.ID, code, out, errOut, want)
		}
		return
	}
}

// countRetries counts the retries of every task that ran in [from, to),
// and those the retry budget gave back: counted on the task (Waits),
// never written as attempts.
func countRetries(t *testing.T, ctx context.Context, st store.Store, from, to time.Time) budgetCount {
	t.Helper()
	var c budgetCount
	for _, tk := range runTasks(t, st) {
		if tk.State == task.DeadLetter || tk.State == task.Failed {
			t.Errorf("task %s is %s: a transient failure must be retried", tk.Name, tk.State)
		}
		c.refused += tk.Waits
		as, err := st.Attempts(ctx, tk.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as {
			switch {
			case a.Outcome == task.OutcomeReleased && a.Decision == "budget":
				t.Errorf("task %s: attempt %d is a RELEASED row for the budget: a wait is counted on the task, not written as an attempt", tk.Name, a.Number)
			case a.Outcome != task.OutcomeReleased && a.Number > 1 && !a.StartedAt.Before(from) && a.StartedAt.Before(to):
				c.ran++
			}
		}
	}
	return c
}
