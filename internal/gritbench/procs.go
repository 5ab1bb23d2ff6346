package gritbench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Spawner returns the command that runs a benchmark worker (Worker) on
// the store dsn names, with concurrency executor slots and otherwise the
// engine configuration of Config.Engine; the benchmark starts it with its
// standard input and output connected.
type Spawner func(dsn string, concurrency int) *exec.Cmd

// workerProc is a running benchmark worker process.
type workerProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	id     string      // its worker id
	lines  chan string // what it wrote after "ready"
	stderr *syncBuffer
}

// spawn starts a worker process and waits until it is set up.
func spawn(ctx context.Context, sp Spawner, dsn string, concurrency int) (*workerProc, error) {
	if sp == nil {
		return nil, errors.New("no way to start worker processes")
	}
	w := &workerProc{cmd: sp(dsn, concurrency), lines: make(chan string, 4096), stderr: &syncBuffer{}}
	w.cmd.Stderr = w.stderr
	var err error
	if w.stdin, err = w.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := w.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start a worker process: %w", err)
	}
	go func(lines chan<- string) {
		defer close(lines)
		s := bufio.NewScanner(out)
		for s.Scan() {
			lines <- s.Text()
		}
	}(w.lines)
	if w.id, err = w.expect(ctx, "ready ", time.Minute); err != nil {
		w.kill()
		return nil, err
	}
	return w, nil
}

// expect waits for a line that starts with word and returns the rest.
func (w *workerProc) expect(ctx context.Context, word string, limit time.Duration) (string, error) {
	t := time.NewTimer(limit)
	defer t.Stop()
	for {
		select {
		case l, ok := <-w.lines:
			if !ok {
				w.cmd.Wait()
				return "", fmt.Errorf("worker process %d ended before %q: %s", w.cmd.Process.Pid, word, w.stderr)
			}
			if rest, ok := strings.CutPrefix(l, word); ok {
				return rest, nil
			}
		case <-t.C:
			return "", fmt.Errorf("worker process %d did not say %q within %v: %s", w.cmd.Process.Pid, word, limit, w.stderr)
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// start lets the worker work; it returns once the worker is listening
// and claiming.
func (w *workerProc) start(ctx context.Context) error {
	if _, err := io.WriteString(w.stdin, "start\n"); err != nil {
		return fmt.Errorf("start worker process %d: %w: %s", w.cmd.Process.Pid, err, w.stderr)
	}
	_, err := w.expect(ctx, "working", time.Minute)
	return err
}

// stop ends the worker's input, so it stops and gives back what it holds,
// and waits for it to exit.
func (w *workerProc) stop() error {
	w.stdin.Close()
	done := make(chan error, 1)
	go func() {
		for range w.lines {
		}
		done <- w.cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("worker process %d: %w: %s", w.cmd.Process.Pid, err, w.stderr)
		}
		return nil
	case <-time.After(time.Minute):
		w.cmd.Process.Kill()
		<-done
		return fmt.Errorf("worker process %d did not stop within a minute of its input ending", w.cmd.Process.Pid)
	}
}

// kill ends the worker with SIGKILL and reaps it.
func (w *workerProc) kill() {
	w.cmd.Process.Kill()
	for range w.lines {
	}
	w.cmd.Wait()
}

func stopAll(ws []*workerProc) error {
	var errs []error
	for _, w := range ws {
		errs = append(errs, w.stop())
	}
	return errors.Join(errs...)
}

// memory is a process's resident set now and at its peak, in MiB, from
// /proc (Linux); ok is false where that cannot be read.
func memory(pid int) (rss, peak float64, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		name, v, found := strings.Cut(l, ":")
		if !found {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		if err != nil {
			continue
		}
		switch name {
		case "VmRSS":
			rss = kb / 1024
		case "VmHWM":
			peak = kb / 1024
		}
	}
	return rss, peak, rss > 0
}

// syncBuffer collects a process's standard error while it runs.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 64<<10 {
		return len(p), nil // enough to say what went wrong
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimSpace(b.buf.String())
}
