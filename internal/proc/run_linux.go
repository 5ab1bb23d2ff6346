package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// drainDelay bounds how long Run keeps reading output after the group is
// dead: only descendants that escaped the group can still hold the pipes.
const drainDelay = time.Second

// Run runs one attempt of s and returns when the leader has exited and its
// process group has been killed. When ctx ends first, the group gets SIGTERM,
// then SIGKILL after s.Grace (at once when ctx's cause matches ErrKill);
// Result.TimedOut tells.
//
// The error is non-nil only when the command did not start: an invalid Spec
// (matching ErrInvalidSpec), a missing program or directory, or a ctx that
// had already ended (wrapping context.Cause(ctx)).
func Run(ctx context.Context, s Spec) (Result, error) {
	if err := s.validate(); err != nil {
		return Result{}, err
	}
	if ctx.Err() != nil {
		return Result{}, fmt.Errorf("proc: start %s: %w", s.label(), context.Cause(ctx))
	}
	if err := checkDir(s.Dir); err != nil {
		return Result{}, fmt.Errorf("proc: start %s: %w", s.label(), err)
	}
	stdout, stderr := newTailBuffer(s.tailBytes()), newTailBuffer(s.tailBytes())
	cmd := command(s, stdout, stderr)
	begin := time.Now()
	exited, err := startLocked(cmd)
	if err != nil {
		return Result{}, fmt.Errorf("proc: start %s: %w", s.label(), err)
	}
	pid := cmd.Process.Pid
	res := Result{Pid: pid}
	res.TimedOut, res.Killed = supervise(ctx, pid, s.grace(), exited)
	res.Duration = time.Since(begin)
	// The leader is a zombie, still in its group: sweep what it left behind.
	killGroup(pid)
	// Wait's error adds nothing to ProcessState: an *ExitError repeats it,
	// and ErrWaitDelay only means an escaped descendant held the pipes.
	_ = cmd.Wait()
	res.ExitCode, res.Signal = exitStatus(cmd.ProcessState)
	res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
	return res, nil
}

// command builds the exec.Cmd: own process group, SIGKILL on parent death,
// output into the tails and the live copies.
func command(s Spec, stdout, stderr *tailBuffer) *exec.Cmd {
	var cmd *exec.Cmd
	if s.Shell != "" {
		cmd = exec.Command("/bin/sh", "-c", s.Shell)
	} else {
		cmd = exec.Command(s.Argv[0], s.Argv[1:]...)
	}
	cmd.Dir = s.Dir
	if len(s.Env) > 0 {
		// Environ includes the PWD matching Dir that exec adds only when
		// Env is nil.
		cmd.Env = append(cmd.Environ(), s.Env...)
	}
	live := new(sync.Mutex)
	cmd.Stdout = &tee{tail: stdout, live: s.Stdout, mu: live}
	cmd.Stderr = &tee{tail: stderr, live: s.Stderr, mu: live}
	cmd.WaitDelay = drainDelay
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// checkDir reports a missing or non-directory Dir clearly: for the latter,
// exec would blame the program ("fork/exec /bin/sh: not a directory").
func checkDir(dir string) error {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("dir: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("dir: %w", &os.PathError{Op: "chdir", Path: dir, Err: syscall.ENOTDIR})
	}
	return nil
}

// supervise waits for the leader to exit, running the kill sequence if ctx
// ends first. It returns whether the sequence ran and whether it needed
// SIGKILL.
func supervise(ctx context.Context, pgid int, grace time.Duration, exited <-chan struct{}) (timedOut, killed bool) {
	select {
	case <-exited:
		return false, false
	case <-ctx.Done():
	}
	select {
	case <-exited: // both were ready: the leader was not cut off
		return false, false
	default:
	}
	if errors.Is(context.Cause(ctx), ErrKill) {
		killGroup(pgid)
		<-exited
		return true, true
	}
	return true, stopGroup(pgid, grace, exited)
}

// stopGroup is the kill sequence: SIGTERM to the group, then SIGKILL if
// the leader has not exited after grace. It returns once the leader has
// exited, and whether it took SIGKILL.
func stopGroup(pgid int, grace time.Duration, exited <-chan struct{}) (killed bool) {
	terminateGroup(pgid)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-exited:
		return false
	case <-timer.C:
	}
	killGroup(pgid)
	<-exited
	return true
}

// terminateGroup asks the group to stop. SIGCONT follows so that a stopped
// member can act on the SIGTERM.
func terminateGroup(pgid int) {
	if syscall.Kill(-pgid, syscall.SIGTERM) != nil {
		// The leader moved to another group (setpgid), leaving this one empty.
		_ = syscall.Kill(pgid, syscall.SIGTERM)
	}
	_ = syscall.Kill(-pgid, syscall.SIGCONT)
}

// killGroup kills the group and the leader, in case it left the group. The
// leader is never reaped before this, so pgid cannot name another group.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	_ = syscall.Kill(pgid, syscall.SIGKILL)
}

func exitStatus(ps *os.ProcessState) (code int, signal string) {
	if ps == nil { // the wait itself failed; the leader is gone regardless
		return -1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, signalName(ws.Signal())
	}
	return ps.ExitCode(), ""
}

// tee writes output to its tail and, while it accepts it, to a live copy.
// The live copies of stdout and stderr share mu, so a writer given as both
// is never called concurrently.
type tee struct {
	tail   *tailBuffer
	live   io.Writer
	mu     *sync.Mutex
	failed bool // only the goroutine copying this stream touches it
}

// copyBuffers recycles the buffers that drain the pipes: without ReadFrom,
// exec would allocate 32 KiB per stream per attempt.
var copyBuffers = sync.Pool{New: func() any { return new([32 << 10]byte) }}

// ReadFrom drains the pipe with a pooled buffer; exec's io.Copy finds it.
func (t *tee) ReadFrom(r io.Reader) (int64, error) {
	buf := copyBuffers.Get().(*[32 << 10]byte)
	defer copyBuffers.Put(buf)
	var total int64
	for {
		n, err := r.Read(buf[:])
		if n > 0 {
			t.Write(buf[:n])
			total += int64(n)
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

func (t *tee) Write(p []byte) (int, error) {
	t.tail.Write(p)
	if t.live != nil && !t.failed {
		t.mu.Lock()
		_, err := t.live.Write(p)
		t.mu.Unlock()
		t.failed = err != nil
	}
	return len(p), nil
}
