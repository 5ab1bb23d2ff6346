package cli

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestSubmitWorkerWait submits a file without working it, starts a worker
// process, waits for the run, and stops the worker with SIGTERM.
func TestSubmitWorkerWait(t *testing.T) {
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
	dir := t.TempDir()
	dsn := "sqlite:" + filepath.Join(dir, "grit.db")
	file := ledgerFile(t, dir, 1, "sleep 1")
	if code, _, errOut := grit(t, "submit", "--store", dsn, file); code != 0 {
		t.Fatalf("submit: %s", errOut)
	}
	st := openStore(t, dsn)
	worker, wout := gritProcess(t, dir, "worker", "--store", dsn, "--drain", "20s")
	waitUntil(t, 20*time.Second, "the task to run", func() bool { return countState(runTasks(t, st), task.Running) == 1 })

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

func TestConfigShowsSources(t *testing.T) {
	e := &env{getenv: func(k string) string {
		return map[string]string{"GRIT_LEASE": "30s", "GRIT_CONCURRENCY": "x"}[k]
	}}
	ws, err := e.workerSettings(workerFlags{concurrency: "7", drain: "1m"})
	if err != nil {
		t.Fatal(err)
	}
	if ws.concurrency != 7 || ws.lease != 30*time.Second || ws.heartbeat != 10*time.Second || ws.drain != time.Minute {
		t.Errorf("settings %+v", ws)
	}
	if _, err := e.workerSettings(workerFlags{}); err == nil || !strings.Contains(err.Error(), "env GRIT_CONCURRENCY") {
		t.Errorf("a bad GRIT_CONCURRENCY: %v", err)
	}
	code, out, _ := grit(t, "config", "--json")
	if code != 0 || !strings.Contains(out, `"name":"heartbeat"`) || !strings.Contains(out, `"name":"retry-budget","env":"GRIT_RETRY_BUDGET","value":"0.2,1,10","source":"default"`) {
		t.Errorf("config: exit %d %s", code, out)
	}
}

func TestWorkerDownstreamKnobs(t *testing.T) {
	e := &env{getenv: func(k string) string {
		return map[string]string{"GRIT_RETRY_BUDGET": "0.5, 2, 20", "GRIT_PRESSURE_MAX": "10s"}[k]
	}}
	ws, err := e.workerSettings(workerFlags{pressureBase: "250ms"})
	if err != nil {
		t.Fatal(err)
	}
	if ws.pressureBase != 250*time.Millisecond || ws.pressureMax != 10*time.Second || ws.budget != (store.BudgetRates{Ratio: 0.5, Floor: 2, Burst: 20}) {
		t.Errorf("settings %+v", ws)
	}
	for _, bad := range []struct {
		f    workerFlags
		want string
	}{
		{workerFlags{budget: "20%"}, `retry-budget (flag --retry-budget): "20%": want RATIO,FLOOR,BURST`},
		{workerFlags{budget: "0.2,1,0"}, "BURST (1 or more)"},
		{workerFlags{budget: "0.2,-1,10"}, "want RATIO,FLOOR,BURST"},
		{workerFlags{pressureBase: "1m"}, "pressure-max 10s must be at least pressure-base 1m0s"},
		{workerFlags{pressureMax: "soon"}, `pressure-max "soon" (flag --pressure-max)`},
	} {
		if _, err := e.workerSettings(bad.f); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v, want an error saying %q", bad.f, err, bad.want)
		}
	}
}

func FuzzParseBudget(f *testing.F) {
	for _, s := range []string{"0.2,1,10", "0,0,1", "1e308,1,1", "NaN,1,1", ",,", "0.2,1", "-0,0,1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := parseBudget(s)
		if err != nil {
			if b != (store.BudgetRates{}) {
				t.Errorf("%q: error %v with rates %+v", s, err, b)
			}
			return
		}
		if !(b.Ratio >= 0 && b.Floor >= 0 && b.Burst >= 1) || math.IsInf(b.Ratio+b.Floor+b.Burst, 0) {
			t.Errorf("%q: accepted %+v", s, b)
		}
	})
}
