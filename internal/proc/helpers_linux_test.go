package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
)

// Bounds for the process tests. A broken build fails at these instead of
// hanging: testTimeout ends the test's processes through Run's own kill
// sequence, runLimit catches a Run that would not return at all.
const (
	testTimeout = 15 * time.Second
	runLimit    = 30 * time.Second
	goneWithin  = 5 * time.Second
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

type runOutcome struct {
	res Result
	err error
}

// startRun calls Run in a goroutine; the outcome arrives on the channel.
func startRun(ctx context.Context, s Spec) <-chan runOutcome {
	done := make(chan runOutcome, 1)
	go func() {
		res, err := Run(ctx, s)
		done <- runOutcome{res, err}
	}()
	return done
}

// awaitRun returns the outcome of startRun, failing the test if Run does
// not return within runLimit.
func awaitRun(t *testing.T, done <-chan runOutcome) (Result, error) {
	t.Helper()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(runLimit):
		t.Fatalf("Run did not return within %v", runLimit)
		return Result{}, nil
	}
}

// runBounded runs s and fails the test if Run errs or does not return.
func runBounded(t *testing.T, ctx context.Context, s Spec) Result {
	t.Helper()
	res, err := awaitRun(t, startRun(ctx, s))
	if err != nil {
		t.Fatalf("Run(%s) = %v", s.label(), err)
	}
	return res
}

// signalWriter records what is written to it and closes seen once the
// output contains want: a task says "ready" when its traps are set.
type signalWriter struct {
	want string
	seen chan struct{}
	mu   sync.Mutex
	buf  bytes.Buffer
	once sync.Once
}

func newSignalWriter(want string) *signalWriter {
	return &signalWriter{want: want, seen: make(chan struct{})}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// processGone reports whether pid no longer runs. A zombie counts as gone:
// it runs nothing, and reaping an orphan is up to init, which may lag or, in
// a container, never come.
func processGone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	s := processState(pid)
	return s == 'Z' || s == 'X' || s == 0
}

// processState returns the state letter of /proc/PID/stat, or 0 if there
// is no such process.
func processState(pid int) byte {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')') // the command name may hold spaces and parentheses
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}

// waitGone polls until pid is gone, for at most goneWithin: a killed
// process is gone at once, but the kernel finishes its exit asynchronously.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	if !poll.Wait(goneWithin, func() bool { return processGone(pid) }) {
		t.Errorf("%s (pid %d) still running %v later (state %q)", what, pid, goneWithin, processState(pid))
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		t.Fatalf("pid file holds %q", b)
	}
	return pid
}

// pidFile names a file a task writes a descendant's pid to, and kills that
// process when the test ends if it is still running, so that a failing test
// leaves nothing behind.
func pidFile(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "pid")
	t.Cleanup(func() {
		b, err := os.ReadFile(path)
		if err != nil {
			return
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 && !processGone(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return path
}
