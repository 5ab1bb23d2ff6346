package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/task"
)

// TestSubmitWorkerWait submits a file without working it, starts a worker
// process, waits for the run, and stops the worker with SIGTERM.
func TestSubmitWorkerWait(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dsn := "sqlite:" + filepath.Join(dir, "grit.db")
	file, _ := filepath.Abs(example("flaky.yaml"))

	code, out, errOut := grit(t, "submit", "--json", "--store", dsn, file)
	var sub struct{ Run int64 }
	if err := json.Unmarshal([]byte(out), &sub); code != 0 || err != nil || sub.Run == 0 {
		t.Fatalf("submit: exit %d, %q %q", code, out, errOut)
	}
	if code, out, _ := grit(t, "submit", "--store", dsn, file); code != 0 || strings.TrimSpace(out) != itoa(sub.Run) {
		t.Errorf("submitting the unfinished file again gave %q, want the same run %d", out, sub.Run)
	}
	st := openStore(t, dsn)
	if ts := runTasks(t, st); len(ts) != 1 || ts[0].State != task.Ready {
		t.Fatalf("after submit: %+v; want one READY task, not worked", ts)
	}

	worker, wout := gritProcess(t, dir, "worker", "--store", dsn, "--drain", "5s")
	code, out, errOut = grit(t, "wait", "--json", "--store", dsn, itoa(sub.Run))
	s := decodeSummary(t, out)
	if code != 0 || s.State != task.Success || s.Tasks[0].Attempt != 3 {
		t.Errorf("wait: exit %d, %+v, %s", code, s, errOut)
	}
	if err := worker.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, worker, 20*time.Second, wout); code != 0 {
		t.Errorf("worker exited %d after SIGTERM:\n%s", code, wout)
	}
	if !strings.Contains(wout.String(), "worker stopped") {
		t.Errorf("worker output:\n%s", wout)
	}
	ws, _ := st.Workers(t.Context())
	if len(ws) != 1 || ws[0].Active {
		t.Errorf("workers %+v; want the one worker, inactive", ws)
	}
	if code, _, errOut := grit(t, "wait", "--store", dsn, "999"); code != exitUsage || !strings.Contains(errOut, "no run has id 999") {
		t.Errorf("wait for an unknown run: exit %d, %q", code, errOut)
	}
}

// TestWorkerDrainsOnSIGTERM stops a worker while a task runs: the task
// finishes within the drain time and is recorded as SUCCESS.
func TestWorkerDrainsOnSIGTERM(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dsn := "sqlite:" + filepath.Join(dir, "grit.db")
	file := ledgerFile(t, dir, 1, "sleep 1")
	if code, _, errOut := grit(t, "submit", "--store", dsn, file); code != 0 {
		t.Fatalf("submit: %s", errOut)
	}
	st := openStore(t, dsn)
	worker, wout := gritProcess(t, dir, "worker", "--store", dsn, "--drain", "20s")
	poll.Until(t, 20*time.Second, "the task to run", func() bool { return countState(runTasks(t, st), task.Running) == 1 })

	code, out, errOut := grit(t, "status", "--json", "--store", dsn)
	var r statusReport
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil {
		t.Fatalf("status: exit %d, %v: %s %s", code, err, out, errOut)
	}
	if len(r.Workers) != 1 || !r.Workers[0].Alive || r.Workers[0].Held != 1 {
		t.Errorf("status workers %+v; want one alive worker holding one task", r.Workers)
	}
	if len(r.Queues) != 1 || r.Queues[0].Counts[task.Running] != 1 {
		t.Errorf("status queues %+v; want default with one RUNNING task", r.Queues)
	}

	worker.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, worker, 30*time.Second, wout); code != 0 {
		t.Fatalf("worker exited %d:\n%s", code, wout)
	}
	if ts := runTasks(t, st); ts[0].State != task.Success || ts[0].Attempt != 1 {
		t.Errorf("after the drain: %s attempt %d; want SUCCESS after 1", ts[0].State, ts[0].Attempt)
	}
}
