package grit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// TestEnqueueTxIsTransactional enqueues inside the caller's transaction:
// invisible before the commit, there after it, and gone with a rollback.
func TestEnqueueTxIsTransactional(t *testing.T) {
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

func TestEnqueueTxNeedsPostgres(t *testing.T) {
	c := open(t) // SQLite
	if _, err := c.EnqueueTx(context.Background(), nil, "email", nil); !errors.Is(err, task.ErrInvalid) {
		t.Errorf("EnqueueTx on SQLite: %v, want ErrInvalid", err)
	}
}
