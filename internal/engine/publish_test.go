package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// eventless is a store that does not keep events: it has every required
// capability but store.Publisher.
type eventless struct {
	store.Store
	store.GroupBreakers
	store.Limiter
	store.Durations
}

// TestPublishNeedsAPublisher: on a store that is not a store.Publisher, a
// handler's event would have nowhere to go; the engine refuses such a
// store at New, saying what it lacks. On one that is, the event is
// recorded with the success.
func TestPublishNeedsAPublisher(t *testing.T) {
	t.Parallel()
	st := newSQLite(t)
	_, err := New(testConfig(eventless{st, st, st, st}))
	if !errors.Is(err, store.ErrMissingCapability) || !strings.Contains(err.Error(), "lacks store.Publisher (") {
		t.Fatalf("New on a store without events = %v, want ErrMissingCapability naming store.Publisher", err)
	}
	got := make(chan error, 1)
	start(t, testConfig(st), Handler{Kind: "pub", Policy: &retry.Never, Fn: func(ctx context.Context, _ *task.Task) error {
		err := Publish(ctx, store.Event{Topic: "t", Payload: []byte(`{}`)})
		got <- err
		return err
	}})
	tk := enqueue(t, st, store.NewTask{Kind: "pub"})
	if err := <-got; err != nil {
		t.Fatalf("Publish = %v", err)
	}
	waitState(t, st, tk.ID, task.Success)
}
