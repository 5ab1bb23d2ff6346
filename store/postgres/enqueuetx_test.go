package postgres_test

import (
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestEnqueueTxCommitsWithTheCallersWrites enqueues in the caller's
// transaction beside the caller's own write: nobody sees the task before
// commit, everybody after.
func TestEnqueueTxCommitsWithTheCallersWrites(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s, other := openIn(t, schema), openIn(t, schema)
	ctx := bounded(t)
	db := admin(t)
	if _, err := db.Exec(ctx, `CREATE TABLE `+schema+`.orders (id int PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO `+schema+`.orders VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	got, err := s.EnqueueTx(ctx, tx, []task.NewTask{{Kind: "ship", Args: []byte(`{"order":1}`)}})
	if err != nil || len(got) != 1 || got[0].ID == 0 {
		t.Fatalf("EnqueueTx = %+v, %v", got, err)
	}
	if c, err := other.Claim(ctx, store.ClaimRequest{Worker: "w", Limit: 10}); err != nil || len(c) != 0 {
		t.Errorf("before commit another store claimed %d tasks (%v), want none", len(c), err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := other.Claim(ctx, store.ClaimRequest{Worker: "w", Limit: 10})
	if err != nil || len(c) != 1 || c[0].ID != got[0].ID || string(c[0].Args) != `{"order":1}` {
		t.Errorf("after commit claimed %+v (%v), want task %d", c, err, got[0].ID)
	}
}

// TestEnqueueTxRollsBackWithTheCaller: a rolled back transaction leaves no
// task, and its idempotency key free.
func TestEnqueueTxRollsBackWithTheCaller(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ctx := bounded(t)
	err := pgx.BeginFunc(ctx, s.Pool(), func(tx pgx.Tx) error {
		if _, err := s.EnqueueTx(ctx, tx, []task.NewTask{{Kind: "k", IdempotencyKey: "once"}}); err != nil {
			t.Fatal(err)
		}
		return pgx.ErrTxClosed // any error rolls back
	})
	if err == nil {
		t.Fatal("BeginFunc committed")
	}
	if ts, err := s.ListTasks(ctx, task.Filter{}); err != nil || len(ts) != 0 {
		t.Errorf("after rollback: %d tasks (%v), want none", len(ts), err)
	}
	again, err := s.Enqueue(ctx, []task.NewTask{{Kind: "k2", IdempotencyKey: "once"}})
	if err != nil || again[0].Kind != "k2" {
		t.Errorf("enqueue with the rolled back key = %+v (%v), want a new task", again, err)
	}
}

// TestEnqueueTxAsksForValidTasks checks the tasks before touching the
// caller's transaction.
func TestEnqueueTxAsksForValidTasks(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ctx := bounded(t)
	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := s.EnqueueTx(ctx, tx, []task.NewTask{{Name: "no kind"}}); err == nil {
		t.Error("EnqueueTx of a task without kind succeeded")
	}
	if _, err := tx.Exec(ctx, `SELECT 1`); err != nil {
		t.Errorf("the caller's transaction is broken: %v", err)
	}
}
