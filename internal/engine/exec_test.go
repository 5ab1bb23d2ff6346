package engine

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/task"
)

func TestExecTasks(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	start(t, testConfig(st))
	tests := []struct {
		name     string
		x        task.Exec
		policy   string
		state    task.State
		attempts int
		class    string
	}{
		{"success", task.Exec{Shell: "echo hello"}, "3 10ms", task.Success, 1, ""},
		{"argv", task.Exec{Argv: []string{"true"}}, "3 10ms", task.Success, 1, ""},
		{"poison", task.Exec{Shell: "echo 'row 17 is bad' >&2; exit 3"}, "5 10ms", task.DeadLetter, 2, "unclassified"},
		{"tempfail is never poison", task.Exec{Shell: "echo busy >&2; exit 75"}, "2 10ms", task.Failed, 3, "transient"},
		{"retry_on_exit", task.Exec{Shell: "exit 4", RetryOnExit: []int{4}}, "2 10ms", task.Failed, 3, "transient"},
		{"permanent_on_exit", task.Exec{Shell: "exit 2", PermanentOnExit: []int{2}}, "5 10ms", task.Failed, 1, "permanent"},
		{"missing binary", task.Exec{Argv: []string{"/nonexistent/grit-test"}}, "5 10ms", task.Failed, 1, "permanent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk := enqueue(t, st, task.NewTask{Kind: task.KindExec, Args: execArgs(t, tt.x), Policy: tt.policy})
			done := waitState(t, st, tk.ID, tt.state)
			if done.Attempt != tt.attempts {
				t.Errorf("%s after %d attempts, want %d", done.State, done.Attempt, tt.attempts)
			}
			as := attempts(t, st, tk.ID)
			if last := as[len(as)-1]; last.Class != tt.class {
				t.Errorf("class %q, want %q (%+v)", last.Class, tt.class, last)
			}
		})
	}
}

func TestExecOutputAndExitAreRecorded(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	start(t, testConfig(st))
	tk := enqueue(t, st, task.NewTask{Kind: task.KindExec, Policy: "never", Args: execArgs(t, task.Exec{
		Shell: `echo "to stdout"; echo "to stderr" >&2; exit 9`,
	})})
	waitState(t, st, tk.ID, task.Failed)
	a := attempts(t, st, tk.ID)[0]
	if a.ExitCode == nil || *a.ExitCode != 9 || !strings.Contains(a.Output, "to stdout") || !strings.Contains(a.Output, "to stderr") {
		t.Errorf("attempt %+v", a)
	}
	if !strings.Contains(a.Error, "exit status 9: to stderr") {
		t.Errorf("error %q", a.Error)
	}
}

// TestExecTimeoutKillsTheGroup runs a task that ignores SIGTERM and forks a
// grandchild: both must be gone within timeout + grace + 1s. The timeout
// leaves the shell time to set its trap on a busy machine: a SIGTERM
// before the trap is set would end it, and test nothing.
func TestExecTimeoutKillsTheGroup(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	start(t, testConfig(st))
	dir := t.TempDir()
	script := `trap '' TERM; sleep 1000 & echo $! > grandchild; echo $$ > child; sleep 1000`
	const timeout, grace = 3 * time.Second, 300 * time.Millisecond
	tk := enqueue(t, st, task.NewTask{Kind: task.KindExec, Policy: "never", Timeout: timeout, Grace: grace,
		Args: execArgs(t, task.Exec{Shell: script, Dir: dir})})
	begin := time.Now()
	done := waitState(t, st, tk.ID, task.Failed)
	if took := time.Since(begin); took > timeout+grace+time.Second+500*time.Millisecond {
		t.Errorf("the hung task took %v to be cut off", took)
	}
	a := attempts(t, st, tk.ID)[0]
	if a.Outcome != task.OutcomeTimeout || a.Signal != "SIGKILL" {
		t.Errorf("attempt %s signal %q, want TIMEOUT by SIGKILL (%s)", a.Outcome, a.Signal, done.LastError)
	}
	for _, f := range []string{"child", "grandchild"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		waitFor(t, 5*time.Second, func() bool { return gone(pid) }, func() string { return f + " is still alive" })
	}
}

// gone reports whether pid no longer runs (absent, or a zombie waiting for
// its parent).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}

func TestExecSeesItsAttempt(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	start(t, testConfig(st))
	tk := enqueue(t, st, task.NewTask{Kind: task.KindExec, Policy: "5 10ms", Args: execArgs(t, task.Exec{
		Shell: `[ "$GRIT_ATTEMPT" -ge 3 ] || { echo "connection reset (attempt $GRIT_ATTEMPT)" >&2; exit 75; }; echo "task $GRIT_TASK_ID token $GRIT_LEASE_TOKEN"`,
	})})
	done := waitState(t, st, tk.ID, task.Success)
	if done.Attempt != 3 {
		t.Errorf("succeeded on attempt %d, want 3", done.Attempt)
	}
	if out := attempts(t, st, tk.ID)[2].Output; !strings.Contains(out, "task "+strconv.FormatInt(tk.ID, 10)+" token ") {
		t.Errorf("output %q does not show the task id and token", out)
	}
}
