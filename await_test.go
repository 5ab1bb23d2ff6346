package grit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// TestAwaitChildrenRunOnceAcrossRetries: with one slot, a parent
// enqueues three children with ChildKey keys and awaits them: it must
// give its slot up for them to run. Woken by the last, it reads their
// results, then fails once; its retry enqueues the same three (answered
// as they are) and answers the await from its record, without waiting.
// Each child runs once.
func TestAwaitChildrenRunOnceAcrossRetries(t *testing.T) {
	t.Parallel()
	for name, dsn := range stepDSNs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := openDSN(t, dsn(t), grit.Config{Concurrency: 1})
			var mu sync.Mutex
			runs := map[int]int{} // child's n: its runs
			grit.Handle(c, "child", func(ctx context.Context, n int) error {
				mu.Lock()
				runs[n]++
				mu.Unlock()
				return grit.SetResult(ctx, map[string]int{"square": n * n})
			}, grit.HandlerConfig{})
			var enqueued sync.Map // id: true
			var waits, failed atomic.Int32
			var sums []int
			grit.Handle(c, "parent", func(ctx context.Context, _ struct{}) error {
				var ids []int64
				for n := 1; n <= 3; n++ {
					e, err := c.Enqueue(ctx, "child", n, grit.WithKey(grit.ChildKey(ctx, fmt.Sprint(n))))
					if err != nil {
						return err
					}
					enqueued.Store(e.ID, true)
					ids = append(ids, e.ID)
				}
				got, err := grit.Await(ctx, ids...)
				if err != nil {
					waits.Add(1)
					return err
				}
				sum := 0
				for i, k := range got {
					var r struct{ Square int }
					if err := k.Decode(&r); err != nil || k.State != task.Success || k.ID != ids[i] {
						return retry.Permanent(fmt.Errorf("child %d: %+v: %v", ids[i], k, err))
					}
					sum += r.Square
				}
				mu.Lock()
				sums = append(sums, sum)
				mu.Unlock()
				if failed.Add(1) == 1 {
					return errors.New("the parent fails once, after enqueuing and awaiting its children")
				}
				return grit.SetResult(ctx, sum)
			}, grit.HandlerConfig{Policy: "3 10ms"})
			parent := enqueue(t, c, "parent")
			startClient(t, c)
			done := waitTask(t, c, parent, task.Success)
			mu.Lock()
			if string(done.Result) != "14" || len(sums) != 2 || sums[0] != 14 || sums[1] != 14 {
				t.Errorf("the parent's result %s, sums %v: want 14 (1 + 4 + 9, from its children's results) on both attempts", done.Result, sums)
			}
			if len(runs) != 3 || runs[1] != 1 || runs[2] != 1 || runs[3] != 1 {
				t.Errorf("children's runs %v, want each of the three once", runs)
			}
			mu.Unlock()
			n := 0
			enqueued.Range(func(any, any) bool { n++; return true })
			if children, err := c.Tasks(context.Background(), task.Filter{Kind: "child"}); err != nil || len(children) != 3 || n != 3 {
				t.Errorf("%d child tasks (%v), %d ids enqueued: want 3, a retry's enqueue answering the first's", len(children), err, n)
			}
			if waits.Load() != 1 || done.Attempt != 2 {
				t.Errorf("%d waits, attempt %d: want one wait (its attempt given back), then two attempts, the second answered from the record", waits.Load(), done.Attempt)
			}
			as, _ := c.Attempts(context.Background(), parent)
			if len(as) != 3 || as[0].Outcome != task.OutcomeSnoozed || as[1].Outcome != task.OutcomeError {
				t.Errorf("attempts %+v: want a wait, a failure, a success", as)
			}
			if ss := stepsOf(t, c, parent); len(ss) != 1 || ss[0].Name != "await" {
				t.Errorf("steps %+v, want the await", ss)
			}
		})
	}
}

// TestAwaitWokenByTheLastChild: the end of the last awaited child wakes
// its parent at once (within a second), not at its recheck an hour on.
func TestAwaitWokenByTheLastChild(t *testing.T) {
	t.Parallel()
	for name, dsn := range stepDSNs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := openDSN(t, dsn(t), grit.Config{Concurrency: 2})
			gate := make(chan struct{})
			grit.Handle(c, "slow", func(ctx context.Context, _ struct{}) error {
				select {
				case <-gate:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}, grit.HandlerConfig{})
			grit.Handle(c, "quick", func(ctx context.Context, _ struct{}) error { return nil }, grit.HandlerConfig{})
			var slow, quick int64
			grit.Handle(c, "parent", func(ctx context.Context, _ struct{}) error {
				_, err := grit.Await(ctx, slow, quick)
				return err
			}, grit.HandlerConfig{})
			slow, quick = enqueue(t, c, "slow"), enqueue(t, c, "quick")
			parent := enqueue(t, c, "parent")
			startClient(t, c)
			waitTask(t, c, quick, task.Success)
			waitTask(t, c, slow, task.Running)
			waiting := waitTask(t, c, parent, task.Sensing)
			if time.Until(waiting.NextAt) < grit.AwaitRecheck/2 {
				t.Fatalf("the parent waits until %s, not for the recheck", waiting.NextAt)
			}
			close(gate)
			ended := waitTask(t, c, slow, task.Success)
			done := waitTask(t, c, parent, task.Success)
			if late := done.FinishedAt.Sub(ended.FinishedAt); late > time.Second {
				t.Errorf("the parent ended %v after its last child: not woken by its end", late)
			}
		})
	}
}

// TestCancellingTheParentCancelsItsChildren: a parent awaiting a child
// that runs and one that waits is cancelled, and so are both; the one
// that ran is stopped.
func TestCancellingTheParentCancelsItsChildren(t *testing.T) {
	t.Parallel()
	for name, dsn := range stepDSNs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := openDSN(t, dsn(t), grit.Config{Queues: []string{"default"}})
			stopped := make(chan struct{})
			grit.Handle(c, "busy", func(ctx context.Context, _ struct{}) error {
				<-ctx.Done()
				close(stopped)
				return ctx.Err()
			}, grit.HandlerConfig{})
			var ids []int64
			grit.Handle(c, "parent", func(ctx context.Context, _ struct{}) error {
				_, err := grit.Await(ctx, ids...)
				return err
			}, grit.HandlerConfig{})
			busy := enqueue(t, c, "busy")
			idle, err := c.Enqueue(context.Background(), "idle", struct{}{}, grit.InQueue("unserved"))
			if err != nil {
				t.Fatal(err)
			}
			ids = []int64{busy, idle.ID}
			parent := enqueue(t, c, "parent")
			startClient(t, c)
			waitTask(t, c, busy, task.Running)
			waitTask(t, c, parent, task.Sensing)
			if _, err := c.Act(context.Background(), parent, task.ActCancel); err != nil {
				t.Fatal(err)
			}
			for _, id := range []int64{parent, busy, idle.ID} {
				if got, _ := c.Task(context.Background(), id); got.State != task.Cancelled {
					t.Errorf("task %d (%s): %s, want CANCELLED", id, got.Kind, got.State)
				}
			}
			select {
			case <-stopped:
			case <-time.After(20 * time.Second):
				t.Error("the running child's attempt was not stopped")
			}
		})
	}
}

// TestAwaitRefusesWhatItCannotAwait: ids that are no task, or the
// handler's own, fail the task permanently, saying which.
func TestAwaitRefusesWhatItCannotAwait(t *testing.T) {
	t.Parallel()
	c := openDSN(t, stepDSNs["sqlite"](t), grit.Config{})
	grit.Handle(c, "unknown", func(ctx context.Context, _ struct{}) error {
		_, err := grit.Await(ctx, 999999)
		return err
	}, grit.HandlerConfig{})
	grit.Handle(c, "self", func(ctx context.Context, _ struct{}) error {
		a, _ := grit.AttemptFrom(ctx)
		_, err := grit.Await(ctx, a.TaskID)
		return err
	}, grit.HandlerConfig{})
	grit.Handle(c, "huge", func(ctx context.Context, _ struct{}) error {
		return grit.SetResult(ctx, strings.Repeat("x", task.MaxResult))
	}, grit.HandlerConfig{})
	unknown, self, huge := enqueue(t, c, "unknown"), enqueue(t, c, "self"), enqueue(t, c, "huge")
	startClient(t, c)
	for id, want := range map[int64]string{unknown: "no task [999999]", self: "the handler's own task", huge: "keep a reference"} {
		got := waitTask(t, c, id, task.Failed)
		if got.Attempt != 1 || !strings.Contains(got.LastError, want) {
			t.Errorf("task %d (%s): attempt %d, error %q; want one attempt, an error saying %q", id, got.Kind, got.Attempt, got.LastError, want)
		}
	}
	if _, err := grit.Await(context.Background(), 1); !errors.Is(err, grit.ErrNoAttempt) {
		t.Errorf("an await outside a handler: %v, want ErrNoAttempt", err)
	}
	if k := grit.ChildKey(context.Background(), "x"); k != "" {
		t.Errorf("a child key outside a handler: %q, want none", k)
	}
}
