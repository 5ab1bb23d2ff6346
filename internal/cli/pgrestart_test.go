package cli

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// TestWorkersSurviveADatabaseRestart stops PostgreSQL with -m immediate
// while two workers run tasks, starts it again once the outage has
// outlasted both workers' leases, and checks that the workers did not
// crash, lost no committed task, and drained the run within 30s of the
// database's return.
func TestWorkersSurviveADatabaseRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster of its own; runs without -short")
	}
	pg := pgtest.NewCluster(t)
	dir := t.TempDir()
	dsn := pg.DSN()
	st, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	const n = 400
	args, _ := json.Marshal(task.Exec{Shell: `sleep 0.05; echo "$GRIT_TASK_ID" >> ` + filepath.Join(dir, "ledger")})
	ts := make([]task.NewTask, n)
	for i := range ts {
		ts[i] = task.NewTask{Kind: task.KindExec, Args: args, Policy: "10 100ms 1s"}
	}
	if _, err := st.Enqueue(t.Context(), ts); err != nil {
		t.Fatal(err)
	}
	workerArgs := []string{"worker", "--store", dsn, "--lease", "3s", "--heartbeat", "1s", "--concurrency", "4"}
	a, aOut := gritProcess(t, dir, workerArgs...)
	b, bOut := gritProcess(t, dir, workerArgs...)
	succeeded := func(s store.Store) map[int64]int {
		done, err := s.ListTasks(t.Context(), task.Filter{States: []task.State{task.Success}})
		if err != nil {
			return nil
		}
		m := map[int64]int{}
		for _, tk := range done {
			m[tk.ID] = tk.Attempt
		}
		return m
	}
	poll.Until(t, 60*time.Second, "50 tasks to succeed", func() bool { return len(succeeded(st)) >= 50 })
	st.Close()

	// The outage lasts until it has outlasted each worker's lease: both
	// say so, and cancel their attempts.
	const lost = "no heartbeat renewed the leases for a whole lease"
	aLost, bLost := strings.Count(aOut.String(), lost), strings.Count(bOut.String(), lost)
	pg.Crash(t)
	poll.Until(t, 60*time.Second, "both workers to lose their leases to the outage", func() bool {
		return strings.Count(aOut.String(), lost) > aLost && strings.Count(bOut.String(), lost) > bLost
	})
	pg.Start(t)
	back := time.Now()

	st2, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	before := succeeded(st2) // what had been committed before the crash
	poll.Until(t, 60*time.Second, "the run to drain", func() bool { return len(succeeded(st2)) == n })
	if took := time.Since(back); took > 30*time.Second {
		t.Errorf("the run drained %v after the database returned, want within 30s", took)
	}
	for _, w := range []*exec.Cmd{a, b} {
		if w.ProcessState != nil {
			t.Errorf("a worker exited during the outage:\n%s\n%s", aOut, bOut)
		}
	}
	after := succeeded(st2)
	for id, attempts := range before {
		if after[id] != attempts {
			t.Errorf("task %d: SUCCESS after %d attempts before the restart, %d after", id, attempts, after[id])
		}
	}
	for _, w := range []*exec.Cmd{a, b} {
		w.Process.Signal(syscall.SIGTERM)
	}
	waitExit(t, a, 30*time.Second, aOut)
	waitExit(t, b, 30*time.Second, bOut)
}
