package grit_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// TestEnqueueTxIsTransactional enqueues inside the caller's transaction:
// invisible before the commit, there after it, and gone with a rollback.
func TestEnqueueTxIsTransactional(t *testing.T) {
	t.Parallel()
	st := pgtest.Open(t)
	c, err := grit.New(st, grit.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	tx, err := st.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := c.EnqueueTx(ctx, tx, "email", map[string]string{"to": "ops@example.com"}, grit.WithPriority(3))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Task(ctx, tk.ID); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("before the commit the task is visible (err %v)", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := c.Task(ctx, tk.ID)
	if err != nil || got.Priority != 3 || string(got.Args) != `{"to":"ops@example.com"}` {
		t.Errorf("after the commit: %+v, %v", got, err)
	}

	tx, _ = st.Pool().Begin(ctx)
	gone, err := c.EnqueueTx(ctx, tx, "email", nil)
	if err != nil {
		t.Fatal(err)
	}
	tx.Rollback(ctx)
	if _, err := c.Task(ctx, gone.ID); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("after the rollback the task exists (err %v)", err)
	}
}

// TestEnqueueTxRunsOnceOrNever works tasks enqueued in transactions: the
// committed one runs exactly once; the rolled-back one never exists, so it
// cannot run.
func TestEnqueueTxRunsOnceOrNever(t *testing.T) {
	t.Parallel()
	st := pgtest.Open(t)
	c, err := grit.New(st, grit.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	runs := map[string]int{}
	ran := make(chan struct{}, 10)
	grit.Handle(c, "email", func(ctx context.Context, a struct{ To string }) error {
		mu.Lock()
		runs[a.To]++
		mu.Unlock()
		ran <- struct{}{}
		return nil
	}, grit.HandlerConfig{})
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Stop(ctx)

	rolledBack, _ := st.Pool().Begin(ctx)
	lost, err := c.EnqueueTx(ctx, rolledBack, "email", struct{ To string }{"rolled-back"})
	if err != nil {
		t.Fatal(err)
	}
	rolledBack.Rollback(ctx)
	committed, _ := st.Pool().Begin(ctx)
	kept, err := c.EnqueueTx(ctx, committed, "email", struct{ To string }{"committed"})
	if err != nil {
		t.Fatal(err)
	}
	if err := committed.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ran:
	case <-time.After(20 * time.Second):
		t.Fatal("the committed task did not run")
	}
	if got := waitDone(t, c, kept.ID); got.State != task.Success || got.Attempt != 1 {
		t.Errorf("committed task: %s after %d attempts", got.State, got.Attempt)
	}
	mu.Lock()
	defer mu.Unlock()
	if runs["committed"] != 1 || runs["rolled-back"] != 0 {
		t.Errorf("runs %v; want the committed task once and the rolled-back one never", runs)
	}
	if _, err := c.Task(ctx, lost.ID); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("the rolled-back task exists (err %v)", err)
	}
}

func waitDone(t *testing.T, c *grit.Client, id int64) task.Task {
	t.Helper()
	return waitTask(t, c, id, task.Success)
}

func TestEnqueueTxNeedsPostgres(t *testing.T) {
	t.Parallel()
	c := open(t) // SQLite
	if _, err := c.EnqueueTx(context.Background(), nil, "email", nil); !errors.Is(err, task.ErrInvalid) {
		t.Errorf("EnqueueTx on SQLite: %v, want ErrInvalid", err)
	}
}
