package grittest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/task"
)

// Result is what one attempt did.
type Result struct {
	// Task is the task as the attempt left it: SUCCESS, RETRYING (NextAt
	// is its retry's time, LastError its error), FAILED, DEAD_LETTER,
	// SENSING (snoozed, or waiting for a message: NextAt is when it runs
	// again)…
	Task task.Task
	// Attempt is the attempt's record: its Outcome, Error, Class,
	// Fingerprint and Decision. Zero when the worker gave the task back
	// without running it (a retry budget spent, a limit reached, a
	// pause): Task says where it is then.
	Attempt task.Attempt
}

// How long Work waits, on the machine's clock, for its worker to take the
// task, and then for the attempt's result to be recorded: bounds for a
// test that would otherwise hang, never waits on the way to a pass.
const (
	claimBound   = 10 * time.Second
	attemptBound = time.Minute
)

// Work enqueues a task of kind with args (as Client.Enqueue does, opts
// included) and runs one attempt of it, as a worker does: the handler
// registered for kind decodes the args and runs, with its steps,
// receives, quarantined items and published events, and the engine
// decides and records what follows. It returns what the attempt did; a
// retry or a snooze is left waiting until the test moves the clock
// (Advance) and asks again (WorkTask, RunUntilDone).
func (c *Client) Work(t testing.TB, kind string, args any, opts ...grit.EnqueueOption) Result {
	t.Helper()
	e, err := c.Enqueue(context.Background(), kind, args, opts...)
	if err != nil {
		t.Fatalf("grittest: work %s: %v", kind, err)
	}
	return c.WorkTask(t, e.ID)
}

// WorkTask runs one attempt of the task id, which must be due on the
// test's clock (READY, or RETRYING or SENSING whose time has come), as
// Work does. Nothing else runs meanwhile: not the tasks the handler
// enqueues, nor the deliveries of its events, until the test works them.
func (c *Client) WorkTask(t testing.TB, id int64) Result {
	t.Helper()
	c.start(t)
	before := c.due(t, id)
	done := c.h.arm(id)
	f := c.await(t, before, done)
	ctx := context.Background()
	after, err := c.Task(ctx, id)
	if err != nil {
		t.Fatalf("grittest: task %d after its attempt: %v", id, err)
	}
	r := Result{Task: after}
	if f.f.Waited {
		return r // given back unstarted: no attempt was recorded
	}
	as, err := c.Attempts(ctx, id)
	if err != nil {
		t.Fatalf("grittest: attempts of task %d: %v", id, err)
	}
	for _, a := range as {
		if a.LeaseToken == f.f.Token {
			r.Attempt = a
		}
	}
	return r
}

// await waits, bounded, for the attempt's result, and fails the test
// with what held it up when it does not come.
func (c *Client) await(t testing.TB, tk task.Task, done <-chan finished) finished {
	t.Helper()
	claim := time.NewTimer(claimBound)
	defer claim.Stop()
	limit := time.NewTimer(attemptBound)
	defer limit.Stop()
	for {
		select {
		case f := <-done:
			if f.err != nil {
				t.Fatalf("grittest: the store did not record the result of task %d (%s): %v", tk.ID, tk.Kind, f.err)
			}
			return f
		case <-claim.C:
			if c.h.claimed(tk.ID) {
				continue // it runs: the attempt's bound holds
			}
			c.h.disarm()
			t.Fatalf("grittest: the worker did not take task %d (%s, queue %q, group %q, tenant %q) within %v: is its queue, kind or tenant paused, its group's breaker open or held, or a limit reached?",
				tk.ID, tk.Kind, tk.Queue, tk.Group, tk.Tenant, claimBound)
		case <-limit.C:
			c.h.disarm()
			t.Fatalf("grittest: the attempt of task %d (%s) did not end within %v: its handler has not returned (does it wait for something only the test can do, or ignore its context?)",
				tk.ID, tk.Kind, attemptBound)
		}
	}
}

// due is the task id, failing the test, saying what to do, when it is
// not due for an attempt or no handler serves its kind.
func (c *Client) due(t testing.TB, id int64) task.Task {
	t.Helper()
	tk, err := c.Task(context.Background(), id)
	if err != nil {
		t.Fatalf("grittest: work task %d: %v", id, err)
	}
	if kinds := c.h.served(); !slices.Contains(kinds, tk.Kind) {
		t.Fatalf("grittest: work task %d: no handler serves kind %q (the worker serves %s): register one with grit.Handle(c.Client, %q, …) before the first Work",
			id, tk.Kind, strings.Join(kinds, ", "), tk.Kind)
	}
	now := c.Now()
	switch {
	case tk.State == task.Pending:
		t.Fatalf("grittest: work task %d (%s): it is PENDING, waiting for the tasks of its run it needs: work those first", id, tk.Kind)
	case tk.State.Terminal():
		t.Fatalf("grittest: work task %d (%s): it has ended, %s (error %q): nothing is left to attempt", id, tk.Kind, tk.State, tk.LastError)
	case !tk.State.Waiting():
		t.Fatalf("grittest: work task %d (%s): it is %s, not waiting for an attempt", id, tk.Kind, tk.State)
	case tk.NextAt.After(now):
		t.Fatalf("grittest: work task %d (%s): it is %s until %s, %v after the test's clock: c.Advance(%v) first",
			id, tk.Kind, tk.State, tk.NextAt.Format(time.RFC3339Nano), tk.NextAt.Sub(now), tk.NextAt.Sub(now))
	}
	return tk
}

// maxPasses bounds RunUntilDone: a task still not done after so many
// attempts and waits is more likely a loop than a test.
const maxPasses = 100

// RunUntilDone works the task id until it ends: before each attempt, it
// moves the clock to the time the task waits for (a retry's, a
// snooze's, a receive's timeout: send the message before, to have it
// received), then works it. It returns every attempt's Result, the last
// one's task ended (SUCCESS, FAILED, DEAD_LETTER…).
func (c *Client) RunUntilDone(t testing.TB, id int64) []Result {
	t.Helper()
	var rs []Result
	for range maxPasses {
		tk, err := c.Task(context.Background(), id)
		if err == nil && tk.State.Waiting() {
			c.AdvanceTo(tk.NextAt)
		}
		r := c.WorkTask(t, id)
		rs = append(rs, r)
		if !r.Task.State.Waiting() {
			return rs
		}
	}
	t.Fatalf("grittest: task %d has not ended after %d attempts: %s", id, maxPasses, passes(rs))
	return rs
}

// passes says what the last few results were.
func passes(rs []Result) string {
	var b strings.Builder
	for _, r := range rs[max(0, len(rs)-5):] {
		fmt.Fprintf(&b, "\n  attempt %d: %s %q, then %s", r.Attempt.Number, r.Attempt.Outcome, r.Attempt.Error, r.Task.State)
	}
	return b.String()
}
