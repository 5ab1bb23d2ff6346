package postgres_test

import (
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestPublishTxCommitsOrRollsBackWithTheCaller: deliveries published in
// the caller's transaction exist after its commit, and not after a
// rollback (nor before the commit, to another store).
func TestPublishTxCommitsOrRollsBackWithTheCaller(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s, other := openIn(t, schema), openIn(t, schema)
	ctx := bounded(t)
	if err := s.Subscribe(ctx, task.Subscription{Topic: "order.paid", Kind: "ship"}); err != nil {
		t.Fatal(err)
	}
	for _, commit := range []bool{false, true} {
		tx, err := s.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.PublishTx(ctx, tx, []task.Event{{Topic: "order.paid", Payload: []byte(`{"order":1}`)}})
		if err != nil || len(got) != 1 {
			t.Fatalf("PublishTx = %v, %v", got, err)
		}
		if c, _ := other.Claim(ctx, store.ClaimRequest{Worker: "w", Limit: 10}); len(c) != 0 {
			t.Errorf("before the end of the transaction another store claimed %d deliveries", len(c))
		}
		if commit {
			err = tx.Commit(ctx)
		} else {
			err = tx.Rollback(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		c, err := other.Claim(ctx, store.ClaimRequest{Worker: "w", Limit: 10})
		if want := map[bool]int{false: 0, true: 1}[commit]; err != nil || len(c) != want {
			t.Errorf("commit %v: claimed %d deliveries (%v), want %d", commit, len(c), err, want)
		}
	}
}
