package proc

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// cancelWhenReady cancels ctx timeout after now, but not before ready is
// closed: a task is cut off only once it has set its traps, so a slow start
// cannot turn a test of the kill sequence into a test of an untrapped shell.
// The moment of cancellation arrives on the returned channel.
func cancelWhenReady(ctx context.Context, timeout time.Duration, ready <-chan struct{}) (context.Context, <-chan time.Time) {
	ctx, cancel := context.WithCancel(ctx)
	deadline := time.Now().Add(timeout)
	at := make(chan time.Time, 1)
	go func() {
		defer cancel()
		select {
		case <-ready:
		case <-ctx.Done():
			return
		}
		timer := time.NewTimer(time.Until(deadline))
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			return
		}
		at <- time.Now()
	}()
	return ctx, at
}

func TestRunKillSequence(t *testing.T) {
	t.Parallel()
	const timeout, grace = 300 * time.Millisecond, 300 * time.Millisecond
	pidfile := pidFile(t)
	ready := newSignalWriter("ready")
	ctx, cancelledAt := cancelWhenReady(testCtx(t), timeout, ready.seen)
	res, err := awaitRun(t, startRun(ctx, Spec{
		Shell:  `trap '' TERM; sleep 1000 & echo $! > "$PIDFILE"; echo ready; sleep 1000`,
		Env:    []string{"PIDFILE=" + pidfile},
		Grace:  grace,
		Stdout: ready,
	}))
	returned := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-cancelledAt:
		if d := returned.Sub(at); d < grace || d > grace+time.Second {
			t.Errorf("Run returned %v after the timeout, want between the grace (%v) and the grace + 1s", d, grace)
		}
	default:
		t.Fatalf("Run returned before the timeout: %+v, output %q", res, ready.String())
	}
	if !res.TimedOut || !res.Killed || res.Signal != "SIGKILL" || res.ExitCode != -1 {
		t.Errorf("got %+v, want TimedOut, Killed, Signal SIGKILL, ExitCode -1", res)
	}
	waitGone(t, res.Pid, "child")
	waitGone(t, readPid(t, pidfile), "grandchild")
}

// TestRunKillsAtOnceOnErrKill: a context ended with ErrKill as its cause
// kills the group without SIGTERM and without waiting out the grace.
func TestRunKillsAtOnceOnErrKill(t *testing.T) {
	t.Parallel()
	pidfile := pidFile(t)
	ready := newSignalWriter("ready")
	ctx, cancel := context.WithCancelCause(testCtx(t))
	defer cancel(nil)
	done := startRun(ctx, Spec{
		Shell:  `trap 'echo term' TERM; sleep 1000 & echo $! > "$PIDFILE"; echo ready; wait`,
		Env:    []string{"PIDFILE=" + pidfile},
		Grace:  time.Minute,
		Stdout: ready,
	})
	select {
	case <-ready.seen:
	case <-time.After(runLimit):
		t.Fatal("the task did not start")
	}
	at := time.Now()
	cancel(fmt.Errorf("lease lost: %w", ErrKill))
	res, err := awaitRun(t, done)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(at); d > time.Second {
		t.Errorf("Run returned %v after the kill, want within 1s (the grace is a minute)", d)
	}
	if !res.TimedOut || !res.Killed || res.Signal != "SIGKILL" || strings.Contains(string(res.Stdout), "term") {
		t.Errorf("got %+v, output %q; want TimedOut, Killed by SIGKILL, no SIGTERM", res, res.Stdout)
	}
	waitGone(t, readPid(t, pidfile), "grandchild")
}

func TestRunPromptSIGTERMExit(t *testing.T) {
	t.Parallel()
	t.Run("deadline", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(testCtx(t), 500*time.Millisecond)
		defer cancel()
		res := runBounded(t, ctx, Spec{Argv: []string{"sleep", "1000"}, Grace: 5 * time.Second})
		if !res.TimedOut || res.Killed || res.Signal != "SIGTERM" || res.ExitCode != -1 {
			t.Errorf("got %+v, want TimedOut, not Killed, Signal SIGTERM", res)
		}
		waitGone(t, res.Pid, "child")
	})
	t.Run("trap", func(t *testing.T) {
		t.Parallel()
		ready := newSignalWriter("ready")
		ctx, _ := cancelWhenReady(testCtx(t), 0, ready.seen)
		res := runBounded(t, ctx, Spec{
			Shell:  `trap 'echo bye; exit 3' TERM; sleep 1000 & echo ready; wait`,
			Grace:  5 * time.Second,
			Stdout: ready,
		})
		if !res.TimedOut || res.Killed || res.ExitCode != 3 || res.Signal != "" {
			t.Errorf("got %+v, want TimedOut, not Killed, ExitCode 3", res)
		}
		if got := string(res.Stdout); got != "ready\nbye\n" {
			t.Errorf("Stdout = %q, want the trap's output", got)
		}
	})
}

func TestRunReapsBackgroundChildren(t *testing.T) {
	t.Parallel()
	pidfile := pidFile(t)
	res := runBounded(t, testCtx(t), Spec{
		Shell: `sleep 1000 & echo $! > "$PIDFILE"; echo done`,
		Env:   []string{"PIDFILE=" + pidfile},
	})
	if res.ExitCode != 0 || res.TimedOut || res.Killed || string(res.Stdout) != "done\n" {
		t.Errorf("got %+v, want a clean exit 0", res)
	}
	waitGone(t, readPid(t, pidfile), "background child")
}

// TestRunEscapedDescendant shows the documented limit: a descendant that
// leaves the group survives, and Run does not wait for the output pipe it
// keeps open for longer than the drain delay.
func TestRunEscapedDescendant(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	pidfile := pidFile(t)
	begin := time.Now()
	res := runBounded(t, testCtx(t), Spec{
		// The pid file is written from inside the new session, so the
		// leader cannot exit (and the group die) before the escape.
		Shell: `setsid sh -c 'echo $$ > "$PIDFILE.tmp"; mv "$PIDFILE.tmp" "$PIDFILE"; exec sleep 1000' &
			while [ ! -s "$PIDFILE" ]; do sleep 0.01; done; echo done`,
		Env: []string{"PIDFILE=" + pidfile},
	})
	elapsed := time.Since(begin)
	escaped := readPid(t, pidfile)
	if res.ExitCode != 0 || string(res.Stdout) != "done\n" {
		t.Errorf("got %+v, want exit 0 with the output", res)
	}
	if elapsed < drainDelay {
		t.Errorf("Run returned after %v, before the drain delay: did the escaped process die?", elapsed)
	}
	if processGone(escaped) {
		t.Errorf("the escaped process %d is gone: update the package doc if setsid no longer escapes", escaped)
	}
}
