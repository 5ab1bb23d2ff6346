package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Child is a long-lived process with the guarantees of a process task's
// (see the package comment): it leads its own process group, it dies
// with its worker (Pdeathsig, from a thread kept locked while it lives),
// and its pid is not reaped, so not reused, before its group has been
// killed. A worker keeps such children warm and hands them work over a
// connection of its own (engine's isolated handlers); Stop ends one with
// the kill sequence of a process task cut off. Its standard error goes to
// a live copy and a tail, which a caller reads to say how it died.
type Child struct {
	Pid    int
	cmd    *exec.Cmd
	exited <-chan struct{}
	stderr *tailBuffer

	reap   sync.Once
	code   int
	signal string
}

// StartChild starts cmd as a Child, its standard output and error kept
// in a tail of tail bytes (0: DefaultTailBytes) and copied to live, if
// not nil, by one writer at a time. cmd must not have SysProcAttr,
// Stdout or Stderr set.
func StartChild(cmd *exec.Cmd, tail int, live io.Writer) (*Child, error) {
	if tail <= 0 {
		tail = DefaultTailBytes
	}
	c := &Child{cmd: cmd, stderr: newTailBuffer(tail)}
	out := &tee{tail: c.stderr, live: live, mu: new(sync.Mutex)}
	cmd.Stdout, cmd.Stderr = out, out // one writer: exec copies them with one goroutine
	cmd.WaitDelay = drainDelay
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	exited, err := startLocked(cmd)
	if err != nil {
		return nil, err
	}
	c.Pid, c.exited = cmd.Process.Pid, exited
	return c, nil
}

// Exited is closed when the child has exited (it is not reaped until Wait).
func (c *Child) Exited() <-chan struct{} { return c.exited }

// Stop ends the child as a process task cut off is ended: SIGTERM to its
// group, then SIGKILL after grace; it returns once the child has exited
// and been reaped, and whether it took SIGKILL.
func (c *Child) Stop(grace time.Duration) (killed bool) {
	select {
	case <-c.exited:
	default:
		killed = stopGroup(c.Pid, grace, c.exited)
	}
	c.Wait()
	return killed
}

// Kill sends SIGKILL to the child's group at once; Wait tells when it is
// gone.
func (c *Child) Kill() { killGroup(c.Pid) }

// Wait waits for the child to exit, kills what is left of its group,
// reaps it, and returns its exit status: its code, or -1 and the signal
// that killed it.
func (c *Child) Wait() (code int, signal string) {
	<-c.exited
	c.reap.Do(func() {
		killGroup(c.Pid)
		_ = c.cmd.Wait()
		c.code, c.signal = exitStatus(c.cmd.ProcessState)
	})
	return c.code, c.signal
}

// Stderr is the tail of what the child wrote to its standard output and
// error.
func (c *Child) Stderr() []byte { return c.stderr.Bytes() }

// RSS is the child's resident memory in bytes, from /proc.
func (c *Child) RSS() (int64, error) { return rss(c.Pid) }

// rss reads VmRSS from /proc/PID/status.
func rss(pid int) (int64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("proc: VmRSS of %d: %q: %w", pid, v, err)
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("proc: no VmRSS for %d (a zombie?)", pid)
}
