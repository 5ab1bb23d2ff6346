// Package proctest runs the programs a test drives as real processes:
// each in a process group of its own, so that a signal reaches what it
// started too; its output kept line by line, so that a test waits on what
// the process printed rather than on time; and killed when the test ends,
// its output logged if the test failed.
package proctest

import (
	"bytes"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Proc is a process started by Start.
type Proc struct {
	// Cmd is the command, started.
	Cmd  *exec.Cmd
	name string

	mu      sync.Mutex
	stdout  []string      // its standard output's lines
	log     []string      // both outputs' lines, stderr's marked
	changed chan struct{} // closed (and replaced) at each new stdout line

	done chan struct{} // closed when it has exited
	err  error         // how it exited, once done is closed
}

// Start starts cmd in a process group of its own, named name in
// failures and logs, with its standard output and error read by the
// Proc. When the test ends, the group is killed with SIGKILL.
func Start(t testing.TB, name string, cmd *exec.Cmd) *Proc {
	t.Helper()
	p := &Proc{Cmd: cmd, name: name, changed: make(chan struct{}), done: make(chan struct{})}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Stdout = &lineWriter{add: func(l string) { p.add(l, false) }}
	cmd.Stderr = &lineWriter{add: func(l string) { p.add(l, true) }}
	cmd.WaitDelay = 5 * time.Second // a child left holding its output does not hold Wait
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = cmd.Wait()
		cmd.Stdout.(*lineWriter).flush()
		cmd.Stderr.(*lineWriter).flush()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Signal(syscall.SIGKILL)
		<-p.done
		if t.Failed() {
			p.mu.Lock()
			defer p.mu.Unlock()
			out := " nothing"
			if len(p.log) > 0 {
				out = ":\n\t" + strings.Join(p.log, "\n\t")
			}
			t.Logf("%s (%s) printed%s", name, strings.Join(cmd.Args, " "), out)
		}
	})
	return p
}

func (p *Proc) add(line string, stderr bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if stderr {
		p.log = append(p.log, "stderr: "+line)
		return
	}
	p.log = append(p.log, line)
	p.stdout = append(p.stdout, line)
	close(p.changed)
	p.changed = make(chan struct{})
}

// Lines returns the lines it printed on standard output so far.
func (p *Proc) Lines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.stdout...)
}

// Await returns the first line it printed on standard output whose first
// words are those of prefix ("claimed 1" is the start of "claimed 1
// attempt 2", not of "claimed 12"), printed before or within the time
// given. It fails the test if no such line comes by then, or if the
// process exits without one.
func (p *Proc) Await(t testing.TB, prefix string, within time.Duration) string {
	t.Helper()
	timeout := time.NewTimer(within)
	defer timeout.Stop()
	for seen := 0; ; {
		p.mu.Lock()
		lines, changed := p.stdout, p.changed
		p.mu.Unlock()
		for ; seen < len(lines); seen++ {
			if l := lines[seen]; l == prefix || strings.HasPrefix(l, prefix+" ") {
				return lines[seen]
			}
		}
		select {
		case <-changed:
		case <-p.done:
			if len(p.Lines()) == seen {
				t.Fatalf("%s exited (%v) without printing %q", p.name, p.err, prefix)
			}
		case <-timeout.C:
			t.Fatalf("%s did not print %q within %v", p.name, prefix, within)
		}
	}
}

// Signal sends sig to its process group.
func (p *Proc) Signal(sig syscall.Signal) error {
	return syscall.Kill(-p.Cmd.Process.Pid, sig)
}

// Wait waits up to within for it to exit and returns how it did (nil for
// status 0); it fails the test if it has not exited by then.
func (p *Proc) Wait(t testing.TB, within time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(within):
		t.Fatalf("%s has not exited within %v", p.name, within)
		return nil
	}
}

// Run starts cmd as Start does and waits up to within for it to exit
// with status 0; it returns its standard output's lines, and fails the
// test otherwise.
func Run(t testing.TB, name string, cmd *exec.Cmd, within time.Duration) []string {
	t.Helper()
	p := Start(t, name, cmd)
	if err := p.Wait(t, within); err != nil {
		t.Fatalf("%s: %v", name, err) // its output is logged as the test ends
	}
	return p.Lines()
}

// lineWriter hands each whole line written to it to add.
type lineWriter struct {
	add     func(string)
	partial []byte
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.partial = append(w.partial, b...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(b), nil
		}
		w.add(string(w.partial[:i]))
		w.partial = w.partial[i+1:]
	}
}

// flush hands on a last line that has no newline.
func (w *lineWriter) flush() {
	if len(w.partial) > 0 {
		w.add(string(w.partial))
		w.partial = nil
	}
}
