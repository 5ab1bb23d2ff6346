package grit_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// downstream is a TCP service on 127.0.0.1 that is down (its port refuses
// connections) until up is called.
type downstream struct {
	addr string
	ln   net.Listener
}

func newDownstream(t *testing.T) *downstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &downstream{addr: ln.Addr().String()}
	ln.Close() // down: the port refuses connections
	t.Cleanup(func() {
		if d.ln != nil {
			d.ln.Close()
		}
	})
	return d
}

// up starts accepting on the port, as a restarted service does.
func (d *downstream) up(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", d.addr)
	if err != nil {
		t.Fatalf("the downstream cannot come back on %s: %v", d.addr, err)
	}
	d.ln = ln
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

// TestAnOutageIsNotPoison: 20 tasks call a downstream that refuses
// connections, which used to make every one DEAD_LETTER at its second
// attempt alike. A refused connection is transient without a mark, and
// failing alike across the kind with none succeeding is an outage: the
// kind is held (its failures decided "outage", its other tasks waiting
// without an attempt) rather than retried on each task's backoff, so they
// all succeed once the downstream is back, in a few attempts each. A task
// that fails the same non-network way twice among them is still poison.
func TestAnOutageIsNotPoison(t *testing.T) {
	t.Parallel()
	const tasks, policy = 20, "10 100ms 1s"
	c := open(t)
	down := newDownstream(t)

	var mu sync.Mutex
	refused := map[int64]int{} // refused attempts per task
	held := make(chan struct{})
	err := grit.Handle(c, "call", func(ctx context.Context, _ struct{}) error {
		conn, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", down.addr)
		if err != nil {
			at, _ := grit.AttemptFrom(ctx)
			mu.Lock()
			defer mu.Unlock()
			refused[at.TaskID]++
			return err // as the net package gives it: nobody marks it
		}
		return conn.Close()
	}, grit.HandlerConfig{Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	err = grit.Handle(c, "settle", func(ctx context.Context, _ struct{}) error {
		return errors.New(`settle: KeyError: "merchant"`)
	}, grit.HandlerConfig{Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	startClient(t, c)

	ctx := context.Background()
	poison, err := c.Enqueue(ctx, "settle", struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for range tasks {
		tk, err := c.Enqueue(ctx, "call", struct{}{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tk.ID)
	}

	// The downstream comes back once the kind is held: an attempt was
	// decided "outage".
	go func() {
		for {
			for _, id := range ids {
				as, _ := c.Attempts(ctx, id)
				for _, a := range as {
					if a.Decision == "outage" {
						close(held)
						return
					}
				}
			}
			select {
			case <-t.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the kind was not held as an outage while the downstream was down: refused attempts by task %v", refused)
	}
	for _, id := range ids {
		// Two identical failures in a row used to make a task poison.
		if tk, _ := c.Task(ctx, id); tk.State == task.DeadLetter || tk.State == task.Failed {
			t.Fatalf("task %d is %s during the outage (%s)", id, tk.State, tk.LastError)
		}
	}
	down.up(t)

	total := 0
	for _, id := range ids {
		tk := waitTask(t, c, id, task.Success)
		if tk.Attempt > 11 {
			t.Errorf("task %d succeeded at attempt %d, want at most 11", id, tk.Attempt)
		}
		total += tk.Attempt
		as, err := c.Attempts(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as[:len(as)-1] {
			if a.Outcome == task.OutcomeReleased {
				continue // given back while the kind was held: no attempt used
			}
			if a.Class != "transient" || a.Decision != "retry" && a.Decision != "outage" {
				t.Errorf("task %d attempt %d: class %q, decision %q; want a transient retry, or held as an outage", id, a.Number, a.Class, a.Decision)
			}
		}
	}
	// Each task fails once or twice, or not at all, and waits in the
	// hold, then succeeds: about 2 attempts each here, against 11 each had
	// they been retried to the cap. The bound leaves room for a slow
	// machine.
	if total > tasks*11*3/4 {
		t.Errorf("%d attempts for %d tasks, want far fewer than %d", total, tasks, tasks*11)
	}
	t.Logf("%d attempts for %d tasks through the outage", total, tasks)

	tk := waitTask(t, c, poison.ID, task.DeadLetter)
	if tk.Attempt != 2 {
		t.Errorf("the poisoned task is DEAD_LETTER at attempt %d, want 2", tk.Attempt)
	}
}

// TestHandlerExplicitOnly: a handler whose policy is explicit-only has an
// error wrapping retry.ErrTransient retried, and an unmarked refused
// connection failed at once, nothing inferred.
func TestHandlerExplicitOnly(t *testing.T) {
	t.Parallel()
	c := open(t)
	down := newDownstream(t)
	var mu sync.Mutex
	calls := map[int64]int{}
	err := grit.Handle(c, "pay", func(ctx context.Context, a struct{ Sentinel bool }) error {
		at, _ := grit.AttemptFrom(ctx)
		mu.Lock()
		calls[at.TaskID]++
		n := calls[at.TaskID]
		mu.Unlock()
		if a.Sentinel {
			if n < 3 {
				return fmt.Errorf("call payments: %w", retry.ErrTransient)
			}
			return nil
		}
		_, err := net.Dial("tcp", down.addr)
		return err
	}, grit.HandlerConfig{Policy: "3 10ms explicit_only"})
	if err != nil {
		t.Fatal(err)
	}
	startClient(t, c)
	ctx := context.Background()
	marked, err := c.Enqueue(ctx, "pay", struct{ Sentinel bool }{true})
	if err != nil {
		t.Fatal(err)
	}
	unmarked, err := c.Enqueue(ctx, "pay", struct{ Sentinel bool }{false})
	if err != nil {
		t.Fatal(err)
	}
	if tk := waitTask(t, c, marked.ID, task.Success); tk.Attempt != 3 {
		t.Errorf("the marked task succeeded at attempt %d, want 3", tk.Attempt)
	}
	if tk := waitTask(t, c, unmarked.ID, task.Failed); tk.Attempt != 1 {
		t.Errorf("the unmarked outage failed at attempt %d, want 1: explicit-only infers nothing", tk.Attempt)
	}
}
