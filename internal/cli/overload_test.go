package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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

// takeoverBound is how long, from the kill, the overload test allows two
// fresh workers on a 2-core machine whose cores a busy loop each keeps
// busy to finish 2,000 tasks taken over from three killed workers. On
// an idle machine it takes about 15 s; before the fix that this test
// guards, busy cores made the fresh workers cancel their own attempts and
// run hundreds of them again, and the takeover took up to 71.5 s.
const takeoverBound = 60 * time.Second

// busyCores keeps every core of the machine busy with a shell busy loop
// per core, until the test ends.
func busyCores(t *testing.T) {
	t.Helper()
	for range runtime.NumCPU() {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
}

// TestTakeoverUnderLoad kills, with SIGKILL, three workers that run 2,000
// process tasks between them, keeps both cores busy with other processes,
// and starts two fresh workers, with the default lease, to take the tasks
// over. Every task must succeed once, on its second attempt: the only
// attempt run again is the one the kill interrupted; no fresh worker may
// give up its own leases because its heartbeat waited behind the work it
// started; and the takeover ends within takeoverBound.
func TestTakeoverUnderLoad(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the overload takeover test takes a minute or more; it runs without -short")
	}
	const n = 2000
	dir := t.TempDir()
	schema := pgtest.NewSchema(t)
	dsn := pgtest.WithSchema(schema)
	st := pgtest.OpenIn(t, schema)
	ledger := filepath.Join(dir, "ledger")
	// The first attempts run until their worker is killed; the second
	// ones run for a second, then write their end.
	body := fmt.Sprintf(`echo "$GRIT_TASK_ID $GRIT_ATTEMPT start" >> %[1]s
if [ "$GRIT_ATTEMPT" = 1 ]; then exec sleep 600; fi
sleep 1
echo "$GRIT_TASK_ID $GRIT_ATTEMPT end" >> %[1]s`, ledger)
	args, _ := json.Marshal(task.Exec{Shell: body})
	ts := make([]task.NewTask, n)
	for i := range ts {
		ts[i] = task.NewTask{Kind: task.KindExec, Args: args, Policy: "5 100ms 1s"}
	}
	if _, err := st.Enqueue(t.Context(), ts); err != nil {
		t.Fatal(err)
	}

	var first []*exec.Cmd
	var firstOut []*lockedBuffer
	for i := range 3 {
		cmd, out := gritProcess(t, dir, "worker", "--store", dsn, "--worker-id", fmt.Sprintf("doomed-%d", i),
			"--concurrency", "700", "--lease", "30s")
		first, firstOut = append(first, cmd), append(firstOut, out)
	}
	poll.Until(t, 3*time.Minute, "the three workers to start all 2,000 first attempts", func() bool {
		return countLedger(t, ledger)["1 start"] == n
	})
	busyCores(t)
	killed := time.Now()
	for i, cmd := range first {
		cmd.Process.Signal(syscall.SIGKILL)
		waitExit(t, cmd, 10*time.Second, firstOut[i])
	}
	var fresh []*exec.Cmd
	var freshOut []*lockedBuffer
	for i := range 2 {
		cmd, out := gritProcess(t, dir, "worker", "--store", dsn, "--worker-id", fmt.Sprintf("fresh-%d", i), "--concurrency", "1100")
		fresh, freshOut = append(fresh, cmd), append(freshOut, out)
	}
	poll.Until(t, takeoverBound+2*time.Minute, "the fresh workers to finish every task", func() bool {
		cs, err := st.QueueCounts(t.Context())
		return err == nil && len(cs) == 1 && cs[0].State == task.Success && cs[0].N == n
	})
	took := time.Since(killed)
	for i, cmd := range fresh {
		cmd.Process.Signal(syscall.SIGTERM)
		waitExit(t, cmd, 30*time.Second, freshOut[i])
	}
	for i, out := range freshOut {
		s := out.String()
		t.Logf("fresh-%d: %d heartbeats failed, %d times it gave up its leases", i,
			strings.Count(s, "heartbeat failed"), strings.Count(s, "no heartbeat renewed the leases"))
	}
	reruns := checkTakeoverUnderLoad(t, st, ledger, n)
	t.Logf("2,000 tasks taken over in %v after the kill (bound %v); %d attempts run again besides those the kill interrupted", took.Round(time.Millisecond), takeoverBound, reruns)
	if took > takeoverBound {
		t.Errorf("the takeover took %v, want within %v", took, takeoverBound)
	}
}

// checkTakeoverUnderLoad checks, from the store and from the ledger, that
// each task ran exactly twice: its first attempt, interrupted by the kill
// of a doomed worker, and its second, on a fresh worker, which succeeded
// and ran to its end once. It returns the count of other attempts.
func checkTakeoverUnderLoad(t *testing.T, st store.Store, ledger string, n int) int {
	t.Helper()
	all, err := st.ListTasks(t.Context(), task.Filter{})
	if err != nil || len(all) != n {
		t.Fatalf("%d tasks (%v), want %d", len(all), err, n)
	}
	reruns := 0
	for _, tk := range all {
		as, err := st.Attempts(t.Context(), tk.ID)
		if err != nil {
			t.Fatal(err)
		}
		ok := len(as) == 2 && tk.State == task.Success &&
			as[0].Outcome == task.OutcomeInterrupted && strings.HasPrefix(as[0].Worker, "doomed-") &&
			as[1].Outcome == task.OutcomeSuccess && strings.HasPrefix(as[1].Worker, "fresh-")
		if !ok {
			reruns += max(len(as)-2, 1)
			if reruns < 10 {
				t.Errorf("task %d: %s after %d attempts %s; want an attempt interrupted by the kill, then one success", tk.ID, tk.State, len(as), outcomes(as))
			}
		}
	}
	seen := countLedger(t, ledger)
	want := map[string]int{"1 start": n, "2 start": n, "2 end": n}
	for k, v := range seen {
		if want[k] != v {
			t.Errorf("the ledger has %d lines %q, want %d: a body ran again that the kill did not interrupt", v, k, want[k])
		}
	}
	return reruns
}

// countLedger counts the ledger's lines by attempt and event ("2 end"),
// across tasks; a missing ledger counts nothing.
func countLedger(t *testing.T, path string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	counts := map[string]int{}
	perTask := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			t.Fatalf("ledger line %q", line)
		}
		if perTask[line] {
			counts["twice: "+f[1]+" "+f[2]]++
		}
		perTask[line] = true
		counts[f[1]+" "+f[2]]++
	}
	return counts
}

// outcomes lists attempts as number:outcome@worker.
func outcomes(as []task.Attempt) string {
	var s []string
	for _, a := range as {
		s = append(s, fmt.Sprintf("%d:%s@%s", a.Number, a.Outcome, a.Worker))
	}
	return "[" + strings.Join(s, " ") + "]"
}
