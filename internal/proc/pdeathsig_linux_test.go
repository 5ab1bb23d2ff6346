package proc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const helperEnv = "GRIT_PROC_TEST_HELPER"

// TestHelperProcess is not a test: it is the worker of TestPdeathsig, run in
// a process of its own. It starts a task that prints its pid, then blocks in
// Run until it is killed.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "worker" {
		t.Skip("the worker process of TestPdeathsig")
	}
	res, err := Run(context.Background(), Spec{Shell: "echo $$; exec sleep 1000", Stdout: os.Stdout})
	fmt.Fprintf(os.Stderr, "helper: Run returned %+v, %v\n", res, err)
	os.Exit(2)
}

func TestPdeathsig(t *testing.T) {
	ctx := testCtx(t)
	// -test.timeout is a backstop: the worker dies, and so its task, even if
	// this test cannot kill it.
	worker := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.timeout=60s")
	worker.Env = append(os.Environ(), helperEnv+"=worker")
	worker.Stderr = os.Stderr
	worker.WaitDelay = time.Second
	out, err := worker.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- line
	}()
	var line string
	select {
	case line = <-lines:
	case <-ctx.Done():
		t.Fatal("the worker did not print its task's pid")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the worker printed %q, want a pid", line)
	}
	if processGone(pid) {
		t.Fatalf("task %d not running while its worker lives", pid)
	}
	if err := worker.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = worker.Wait()
	waitGone(t, pid, "task of the killed worker")
}

// TestRunSurvivesThreadExits retires OS threads while a task runs: a
// goroutine that exits locked to its thread takes the thread with it, and
// Pdeathsig fires when the thread that forked the child exits. The task must
// live on until its attempt ends (then it dies of Run's SIGTERM, not of a
// SIGKILL before that).
func TestRunSurvivesThreadExits(t *testing.T) {
	outer := testCtx(t)
	ctx, cancel := context.WithCancel(outer)
	defer cancel()
	ready := newSignalWriter("ready")
	done := startRun(ctx, Spec{Shell: "echo ready; exec sleep 1000", Stdout: ready})
	select {
	case <-ready.seen:
	case o := <-done:
		t.Fatalf("Run returned before the task started: %+v, %v", o.res, o.err)
	}
	retireThreads(t, outer, 64)
	cancel()
	res, err := awaitRun(t, done)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Signal != "SIGTERM" {
		t.Errorf("got %+v; want the task to live until cancelled, then die of SIGTERM", res)
	}
}

// retireThreads makes n goroutines, one after the other, exit while locked
// to their threads, and waits until the runtime has terminated each thread.
// The spawning goroutine is locked too, so each new goroutine runs on an
// idle thread when there is one: the threads idle when this starts are
// retired first.
func retireThreads(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for range n {
		tids := make(chan int, 1)
		go func() {
			runtime.LockOSThread()
			tids <- syscall.Gettid()
		}()
		tid := <-tids
		if tid == os.Getpid() {
			continue // the main thread is never terminated, only parked
		}
		for {
			if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); err != nil {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("thread %d still alive", tid)
			case <-time.After(100 * time.Microsecond):
			}
		}
	}
}
