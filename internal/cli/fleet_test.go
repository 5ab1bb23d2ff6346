package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// fleetTasks is how many tasks the fleet test works: 10,000 by default,
// fewer with GRIT_FLEET_TASKS for a quick local run.
func fleetTasks(t *testing.T) int {
	if v := os.Getenv("GRIT_FLEET_TASKS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("GRIT_FLEET_TASKS=%q: want a positive number", v)
		}
		return n
	}
	return 10_000
}

// fleetWorker is one grit worker process of the fleet, restartable under
// the same identity.
type fleetWorker struct {
	id    string
	cmd   *exec.Cmd
	out   *lockedBuffer
	kills []time.Time
}

func startFleetWorker(t *testing.T, dir, dsn string, w *fleetWorker) {
	cmd, out := gritProcess(t, dir, "worker", "--store", dsn, "--worker-id", w.id,
		"--lease", "3s", "--heartbeat", "1s", "--concurrency", "8", "--drain", "5s")
	w.cmd, w.out = cmd, out
}

// TestFleetSurvivesSIGKILL works 10,000 process tasks with 3 worker
// processes on one PostgreSQL, killing one of them with SIGKILL every two
// seconds and starting it again. Every task ends SUCCESS with exactly one
// successful attempt, every task's side effect is in the ledger, and each
// killed attempt is taken over within lease + heartbeat + 2s of the kill,
// then runs again.
func TestFleetSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the fleet test takes a minute or more; it runs without -short")
	}
	dir := t.TempDir()
	schema := pgtest.NewSchema(t)
	dsn := pgtest.WithSchema(schema)
	st := pgtest.OpenIn(t, schema)
	n := fleetTasks(t)
	ledger := filepath.Join(dir, "ledger")
	args, _ := json.Marshal(task.Exec{Shell: `echo "$GRIT_TASK_ID $GRIT_ATTEMPT" >> ` + ledger})
	for start := 0; start < n; start += 1000 {
		ts := make([]task.NewTask, min(1000, n-start))
		for i := range ts {
			ts[i] = task.NewTask{Kind: task.KindExec, Args: args, Policy: "20 100ms 1s"}
		}
		if _, err := st.Enqueue(t.Context(), ts); err != nil {
			t.Fatal(err)
		}
	}

	workers := []*fleetWorker{{id: "fleet-1"}, {id: "fleet-2"}, {id: "fleet-3"}}
	for _, w := range workers {
		startFleetWorker(t, dir, dsn, w)
	}
	done := func() bool {
		cs, err := st.QueueCounts(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if c.State != task.Success && c.N > 0 {
				return false
			}
		}
		return len(cs) > 0
	}
	// A worker is killed every two seconds, the cadence of the faults
	// under test, until every task has succeeded.
	kills := time.NewTicker(2 * time.Second)
	defer kills.Stop()
	limit := time.NewTimer(10 * time.Minute)
	defer limit.Stop()
	for i := 0; !done(); i++ {
		select {
		case <-kills.C:
		case <-limit.C:
			t.Fatalf("the fleet did not finish %d tasks in 10 minutes", n)
		}
		if done() {
			break
		}
		w := workers[i%len(workers)]
		w.cmd.Process.Signal(syscall.SIGKILL)
		w.cmd.Wait()
		w.kills = append(w.kills, time.Now())
		startFleetWorker(t, dir, dsn, w)
	}
	for _, w := range workers {
		w.cmd.Process.Signal(syscall.SIGTERM)
		waitExit(t, w.cmd, 30*time.Second, w.out)
	}
	checkFleet(t, st, ledger, n, workers)
}

func checkFleet(t *testing.T, st store.Store, ledger string, n int, workers []*fleetWorker) {
	t.Helper()
	seen := readLedger(t, ledger)
	ts, err := st.ListTasks(t.Context(), task.Filter{})
	if err != nil || len(ts) != n {
		t.Fatalf("%d tasks (%v), want %d", len(ts), err, n)
	}
	kills := map[string][]time.Time{}
	totalKills := 0
	for _, w := range workers {
		kills[w.id] = w.kills
		totalKills += len(w.kills)
	}
	interrupted := 0
	for _, tk := range ts {
		if seen[tk.ID] == 0 {
			t.Errorf("task %d: no side effect in the ledger", tk.ID)
		}
		as, err := st.Attempts(t.Context(), tk.ID)
		if err != nil {
			t.Fatal(err)
		}
		successes := 0
		for i, a := range as {
			if a.Outcome == task.OutcomeSuccess {
				successes++
			}
			if a.Outcome == task.OutcomeInterrupted && i+1 < len(as) {
				interrupted++
				checkTakeover(t, tk.ID, a, as[i+1], kills[a.Worker])
			}
		}
		if successes != 1 || tk.State != task.Success {
			t.Errorf("task %d: %s with %d successful attempts; want SUCCESS with exactly 1", tk.ID, tk.State, successes)
		}
	}
	t.Logf("%d tasks, %d kills, %d interrupted attempts re-run", n, totalKills, interrupted)
	if totalKills == 0 {
		t.Error("no worker was killed: the test proves nothing")
	}
}

// checkTakeover: an interrupted attempt is taken over (ended by a
// sibling's rescue, which puts its task back to run again) within
// lease + heartbeat + 2s of the kill that interrupted it. When the next
// attempt starts is the queue's business: behind a backlog of thousands,
// it follows the fleet's throughput, which a test does not assert.
func checkTakeover(t *testing.T, id int64, lost, next task.Attempt, kills []time.Time) {
	for _, k := range kills {
		if k.After(lost.StartedAt) {
			if gap := lost.EndedAt.Sub(k); gap > 3*time.Second+time.Second+2*time.Second {
				t.Errorf("task %d: taken over %v after the kill of %s at %s, want within lease + heartbeat + 2s; interrupted attempt %+v, next %+v",
					id, gap, lost.Worker, k.Format("15:04:05.000"), lost, next)
			}
			return
		}
	}
}

func readLedger(t *testing.T, path string) map[int64]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[int64]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			t.Fatalf("ledger line %q", sc.Text())
		}
		id, _ := strconv.ParseInt(fields[0], 10, 64)
		seen[id]++
	}
	return seen
}

// TestFrozenWorkerLosesItsTasks freezes a worker with SIGSTOP past its
// lease while it runs six process tasks: a sibling takes them over and
// finishes them; when the frozen worker is resumed, its late results are
// rejected and its processes are killed.
func TestFrozenWorkerLosesItsTasks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	schema := pgtest.NewSchema(t)
	dsn := pgtest.WithSchema(schema)
	st := pgtest.OpenIn(t, schema)
	ledger := filepath.Join(dir, "ledger")
	// The first attempt of each task outlives the freeze; the sibling's
	// attempts end at once.
	script := fmt.Sprintf(`echo "$GRIT_TASK_ID $GRIT_ATTEMPT $$" >> %s; if [ "$GRIT_ATTEMPT" = 1 ]; then sleep 60; fi`, ledger)
	args, _ := json.Marshal(task.Exec{Shell: script})
	ts := make([]task.NewTask, 6)
	for i := range ts {
		ts[i] = task.NewTask{Kind: task.KindExec, Args: args, Policy: "5 100ms 1s"}
	}
	if _, err := st.Enqueue(t.Context(), ts); err != nil {
		t.Fatal(err)
	}
	workerArgs := []string{"worker", "--store", dsn, "--lease", "2s", "--heartbeat", "500ms", "--concurrency", "10"}
	frozen, frozenOut := gritProcess(t, dir, append(workerArgs, "--worker-id", "frozen")...)
	poll.Until(t, 30*time.Second, "the first worker to run all six tasks", func() bool {
		held, err := st.Held(t.Context())
		return err == nil && held["frozen"] == 6 && len(firstAttemptPIDs(t, ledger)) == 6
	})
	pids := firstAttemptPIDs(t, ledger)
	if err := frozen.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stoppedAt := time.Now()

	sibling, siblingOut := gritProcess(t, dir, append(workerArgs, "--worker-id", "sibling")...)
	poll.Until(t, 30*time.Second, "the sibling to finish the frozen worker's tasks", func() bool {
		cs, err := st.QueueCounts(t.Context())
		return err == nil && len(cs) == 1 && cs[0].State == task.Success && cs[0].N == 6
	})
	if took := time.Since(stoppedAt); took > 2*time.Second+500*time.Millisecond+5*time.Second {
		t.Errorf("the sibling took %v to finish the tasks of a frozen worker", took)
	}

	if err := frozen.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		poll.Until(t, 20*time.Second, fmt.Sprintf("the frozen worker's process %d to be killed", pid), func() bool { return processGone(pid) })
	}
	poll.Until(t, 20*time.Second, "the frozen worker to report its lost leases", func() bool {
		return strings.Contains(frozenOut.String(), "lease lost")
	})
	for _, w := range []*exec.Cmd{frozen, sibling} {
		w.Process.Signal(syscall.SIGTERM)
	}
	waitExit(t, frozen, 30*time.Second, frozenOut)
	waitExit(t, sibling, 30*time.Second, siblingOut)

	all, err := st.ListTasks(t.Context(), task.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range all {
		as, _ := st.Attempts(t.Context(), tk.ID)
		successes := 0
		for _, a := range as {
			if a.Outcome == task.OutcomeSuccess {
				successes++
				if a.Worker != "sibling" {
					t.Errorf("task %d: success recorded for %s; the frozen worker's late result must be rejected", tk.ID, a.Worker)
				}
			}
		}
		if tk.State != task.Success || successes != 1 {
			t.Errorf("task %d: %s, %d successes; want SUCCESS once", tk.ID, tk.State, successes)
		}
	}
}

// firstAttemptPIDs reads the shell pids of the first attempts from the
// ledger.
func firstAttemptPIDs(t *testing.T, ledger string) []int {
	t.Helper()
	b, err := os.ReadFile(ledger)
	if err != nil {
		return nil
	}
	var pids []int
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[1] == "1" {
			pid, _ := strconv.Atoi(f[2])
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestStopPastTheDrainGivesTasksBack stops a worker whose tasks run longer
// than its drain: they go back at once with their attempt count unchanged,
// and a sibling finishes them.
func TestStopPastTheDrainGivesTasksBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	schema := pgtest.NewSchema(t)
	dsn := pgtest.WithSchema(schema)
	st := pgtest.OpenIn(t, schema)
	args, _ := json.Marshal(task.Exec{Shell: `if [ "$GRIT_WORKER_ID" = first ]; then sleep 60; fi`})
	ts := make([]task.NewTask, 4)
	for i := range ts {
		ts[i] = task.NewTask{Kind: task.KindExec, Args: args, Policy: "3 100ms 1s"}
	}
	if _, err := st.Enqueue(t.Context(), ts); err != nil {
		t.Fatal(err)
	}
	workerArgs := []string{"worker", "--store", dsn, "--drain", "1s", "--concurrency", "8"}
	first, firstOut := gritProcess(t, dir, append(workerArgs, "--worker-id", "first")...)
	poll.Until(t, 30*time.Second, "the first worker to hold all four tasks", func() bool {
		held, err := st.Held(t.Context())
		return err == nil && held["first"] == 4
	})
	first.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, first, 15*time.Second, firstOut); code != 0 {
		t.Fatalf("the stopped worker exited %d:\n%s", code, firstOut)
	}
	back, err := st.ListTasks(t.Context(), task.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range back {
		if tk.State != task.Ready || tk.Attempt != 0 {
			t.Errorf("task %d after the stop: %s attempt %d; want READY attempt 0", tk.ID, tk.State, tk.Attempt)
		}
	}
	second, secondOut := gritProcess(t, dir, append(workerArgs, "--worker-id", "second")...)
	poll.Until(t, 30*time.Second, "the sibling to finish the tasks", func() bool {
		cs, err := st.QueueCounts(t.Context())
		return err == nil && len(cs) == 1 && cs[0].State == task.Success && cs[0].N == 4
	})
	done, _ := st.ListTasks(t.Context(), task.Filter{})
	for _, tk := range done {
		if tk.Attempt != 1 {
			t.Errorf("task %d finished after %d attempts, want 1: the released attempt must not count", tk.ID, tk.Attempt)
		}
	}
	second.Process.Signal(syscall.SIGTERM)
	waitExit(t, second, 15*time.Second, secondOut)
}
