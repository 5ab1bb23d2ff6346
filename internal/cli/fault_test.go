package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// TestMain lets the test binary act as the grit command, so fault tests can
// run it as a real process and kill it. The variable is set for the tests
// too, so that grit bench, run in-process, starts its worker processes as
// grit (os.Executable is this binary).
func TestMain(m *testing.M) {
	// A child started as grit runs the CLI; the fuzzer's workers (-test.*
	// flags) inherit the variable but are tests.
	if os.Getenv("GRIT_TEST_AS_CLI") == "1" && !slices.ContainsFunc(os.Args[1:], func(a string) bool { return strings.HasPrefix(a, "-test.") }) {
		os.Exit(Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Setenv("GRIT_TEST_AS_CLI", "1")
	os.Exit(m.Run())
}

// gritProcess starts the grit command as a child process.
func gritProcess(t *testing.T, dir string, args ...string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GRIT_TEST_AS_CLI=1")
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, out
}

// lockedBuffer collects a child's output while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func openStore(t *testing.T, dsn string) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func runTasks(t *testing.T, st store.Store) []task.Task {
	t.Helper()
	ts, err := st.ListTasks(context.Background(), task.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func countState(ts []task.Task, s task.State) int {
	n := 0
	for _, t := range ts {
		if t.State == s {
			n++
		}
	}
	return n
}

func waitExit(t *testing.T, cmd *exec.Cmd, timeout time.Duration, out *lockedBuffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		t.Fatalf("grit did not end within %v:\n%s", timeout, out)
		return -1
	}
}

// ledgerFile writes a task file of n tasks that log their starts and ends
// to a ledger, keyed by task and attempt.
func ledgerFile(t *testing.T, dir string, n int, body string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("name: ledger\ndefaults:\n  retry: \"5 50ms 200ms\"\ntasks:\n")
	for i := range n {
		fmt.Fprintf(&b, "  t%02d:\n    run: |\n", i)
		fmt.Fprintf(&b, "      echo \"$GRIT_TASK_NAME $GRIT_ATTEMPT start\" >> %s\n", filepath.Join(dir, "ledger"))
		for _, line := range strings.Split(body, "\n") {
			fmt.Fprintf(&b, "      %s\n", line)
		}
	}
	p := filepath.Join(dir, "tasks.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func ledgerStarts(t *testing.T, dir string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "ledger"))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]int{}
	}
	if err != nil {
		t.Fatal(err)
	}
	starts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[2] == "start" {
			starts[f[0]]++
		}
	}
	return starts
}

// TestSIGKILLThenResume kills a grit run with SIGKILL mid-run, runs the
// same file again, and checks that nothing was lost, no task succeeded
// twice, only the attempts in flight at the kill ran again, and the dead
// run's leases were taken over at once rather than when they expired.
func TestSIGKILLThenResume(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dsn := "sqlite:" + filepath.Join(dir, "grit.db")
	// Each attempt leaves a background grandchild, which Pdeathsig does not
	// reach when grit is killed; the resumed run must end them.
	file := ledgerFile(t, dir, 24, fmt.Sprintf("sleep 1000 & echo $! > %s/gc-$GRIT_TASK_NAME-$GRIT_ATTEMPT\nsleep 0.3", dir))
	st := openStore(t, dsn)

	first, out := gritProcess(t, dir, "run", "--store", dsn, "--concurrency", "4", file)
	poll.Until(t, 60*time.Second, "6 tasks to succeed", func() bool {
		return countState(runTasks(t, st), task.Success) >= 6
	})
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitExit(t, first, 10*time.Second, out)
	killedAt := time.Now()

	before := map[int64]task.State{}
	inFlight := 0
	for _, tk := range runTasks(t, st) {
		before[tk.ID] = tk.State
		if tk.State == task.Running {
			inFlight++
		}
	}
	if inFlight == 0 {
		t.Fatal("no attempt was in flight at the kill: the test proves nothing")
	}
	second, out2 := gritProcess(t, dir, "run", "--store", dsn, "--concurrency", "4", file)
	if code := waitExit(t, second, 60*time.Second, out2); code != 0 {
		t.Fatalf("the resumed run exited %d:\n%s", code, out2)
	}
	if !strings.Contains(out2.String(), "resuming run 1") {
		t.Errorf("the second grit run did not resume the first run:\n%s", out2)
	}

	grandchildren, _ := filepath.Glob(filepath.Join(dir, "gc-*"))
	t.Cleanup(func() { // if the test fails, leave nothing running
		for _, f := range grandchildren {
			b, _ := os.ReadFile(f)
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	if len(grandchildren) < 24 {
		t.Fatalf("%d grandchildren recorded, want at least 24", len(grandchildren))
	}
	for _, f := range grandchildren {
		b, _ := os.ReadFile(f)
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		poll.Until(t, 10*time.Second, filepath.Base(f)+" to be gone", func() bool { return processGone(pid) })
	}

	starts := ledgerStarts(t, dir)
	for _, tk := range runTasks(t, st) {
		if tk.State != task.Success {
			t.Errorf("%s ended %s", tk.Name, tk.State)
		}
		as, err := st.Attempts(context.Background(), tk.ID)
		if err != nil {
			t.Fatal(err)
		}
		successes := 0
		for _, a := range as {
			if a.Outcome == task.OutcomeSuccess {
				successes++
			}
			if a.Outcome == task.OutcomeInterrupted && a.EndedAt.Sub(killedAt) > 10*time.Second {
				t.Errorf("%s: the dead run's attempt was taken over %v after the kill; its predecessor was dead, so at once",
					tk.Name, a.EndedAt.Sub(killedAt))
			}
		}
		if successes != 1 {
			t.Errorf("%s: %d successful attempts, want exactly 1", tk.Name, successes)
		}
		switch before[tk.ID] {
		case task.Success:
			if starts[tk.Name] != 1 {
				t.Errorf("%s succeeded before the kill but ran %d times", tk.Name, starts[tk.Name])
			}
		case task.Running:
			if len(as) != 2 || as[0].Outcome != task.OutcomeInterrupted {
				t.Errorf("%s was in flight at the kill: attempts %+v, want INTERRUPTED then SUCCESS", tk.Name, as)
			}
		}
	}
}

// processGone reports whether pid no longer runs (absent, or a zombie).
func processGone(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) == syscall.ESRCH {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] == "Z"
}

// TestInterruptStopsGracefully sends SIGINT to a grit run whose tasks are
// running: it exits 130, the running tasks go back to READY without using
// an attempt, and --resume finishes the run.
func TestInterruptStopsGracefully(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dsn := "sqlite:" + filepath.Join(dir, "grit.db")
	file := ledgerFile(t, dir, 3, fmt.Sprintf("[ -f %s ] || sleep 30", filepath.Join(dir, "go")))
	st := openStore(t, dsn)

	cmd, out := gritProcess(t, dir, "run", "--store", dsn, file)
	poll.Until(t, 30*time.Second, "3 running tasks", func() bool {
		return countState(runTasks(t, st), task.Running) == 3 && len(ledgerStarts(t, dir)) == 3
	})
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, 20*time.Second, out); code != exitStopped {
		t.Fatalf("exit %d, want 130:\n%s", code, out)
	}
	if !strings.Contains(out.String(), "grit run --resume 1") {
		t.Errorf("no resume hint:\n%s", out)
	}
	for _, tk := range runTasks(t, st) {
		if tk.State != task.Ready || tk.Attempt != 0 {
			t.Errorf("%s: %s attempt %d after the stop; want READY attempt 0", tk.Name, tk.State, tk.Attempt)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	resumed, out2 := gritProcess(t, dir, "run", "--store", dsn, "--resume", "1")
	if code := waitExit(t, resumed, 30*time.Second, out2); code != 0 {
		t.Fatalf("resume exited %d:\n%s", code, out2)
	}
	for _, tk := range runTasks(t, st) {
		if tk.State != task.Success || tk.Attempt != 1 {
			t.Errorf("%s: %s after %d attempts; want SUCCESS after 1", tk.Name, tk.State, tk.Attempt)
		}
	}
}
