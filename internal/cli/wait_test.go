package cli

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestWaitSaysNoWorkerAndStopsOnSignals: grit wait on a run no worker
// works says so on standard error after --warn-after, and Ctrl-C or
// SIGTERM stops it as they stop grit run: exit 130, saying the run goes
// on.
func TestWaitSaysNoWorkerAndStopsOnSignals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := tempStore(t)
	file := writeFile(t, "name: later\ntasks:\n  a: {run: \"true\"}\n")
	code, out, errOut := grit(t, "submit", "--store", st, file)
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	run := strings.TrimSpace(out)
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		cmd, out := gritProcess(t, dir, "wait", run, "--store", st, "--warn-after", "200ms")
		poll.UntilSays(t, 30*time.Second, func() string { return "grit wait did not say no worker is alive:\n" + out.String() }, func() bool {
			return strings.Contains(out.String(), "no worker is alive") && strings.Contains(out.String(), "start one with grit worker")
		})
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		if code := waitExit(t, cmd, 20*time.Second, out); code != exitStopped {
			t.Errorf("grit wait stopped by %v: exit %d, want %d:\n%s", sig, code, exitStopped, out)
		}
		if !strings.Contains(out.String(), "stopped; run "+run+" goes on; grit wait "+run) {
			t.Errorf("grit wait stopped by %v did not say the run goes on:\n%s", sig, out)
		}
	}
	if code, _, errOut := grit(t, "wait", run, "--store", st, "--warn-after", "-1s"); code != exitUsage || !strings.Contains(errOut, "--warn-after -1s") {
		t.Errorf("wait --warn-after -1s: exit %d, %q; want a usage error naming the flag", code, errOut)
	}
}

// TestWaitSaysNoLiveWorkerServesTheRun: with a worker alive that serves
// other kinds only, grit wait names the kinds of the run's waiting tasks
// that no live worker serves.
func TestWaitSaysNoLiveWorkerServesTheRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dsn := tempStore(t)
	file := writeFile(t, "name: later\ntasks:\n  a: {run: \"true\"}\n")
	code, out, errOut := grit(t, "submit", "--store", dsn, file)
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	run := strings.TrimSpace(out)
	st, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.RegisterWorker(t.Context(), task.Worker{ID: "resizer", Kinds: []string{"resize"}}); err != nil {
		t.Fatal(err)
	}
	cmd, logs := gritProcess(t, dir, "wait", run, "--store", dsn, "--warn-after", "200ms")
	want := "no live worker serves the kinds its waiting tasks have (" + task.KindExec + ")"
	poll.UntilSays(t, 30*time.Second, func() string { return "grit wait did not say " + want + ":\n" + logs.String() }, func() bool {
		return strings.Contains(logs.String(), want)
	})
	cmd.Process.Signal(syscall.SIGTERM)
	waitExit(t, cmd, 20*time.Second, logs)
}
