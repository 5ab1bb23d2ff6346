package engine

import (
	"context"
	"testing"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// TestPublishNeedsAPublisher: a handler's event goes to the store's
// store.Publisher (part of every store.Store), recorded with the
// success.
func TestPublishNeedsAPublisher(t *testing.T) {
	t.Parallel()
	st := newSQLite(t)
	got := make(chan error, 1)
	start(t, testConfig(st), Handler{Kind: "pub", Policy: &retry.Never, Fn: func(ctx context.Context, _ *task.Task) error {
		err := Publish(ctx, task.Event{Topic: "t", Payload: []byte(`{}`)})
		got <- err
		return err
	}})
	tk := enqueue(t, st, task.NewTask{Kind: "pub"})
	if err := <-got; err != nil {
		t.Fatalf("Publish = %v", err)
	}
	waitState(t, st, tk.ID, task.Success)
}
