package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// eventless is a store that does not keep events: it has store.Store's
// methods alone.
type eventless struct{ protected }

// TestPublishFailsWhenTheStoreKeepsNoEvents: on a store that is not a
// store.Publisher, a handler's Publish says so at once, instead of the
// event being dropped when the success is recorded.
func TestPublishFailsWhenTheStoreKeepsNoEvents(t *testing.T) {
	for _, c := range []struct {
		name     string
		wantFail bool // the store is wrapped in eventless
	}{{"publisher", false}, {"eventless", true}} {
		t.Run(c.name, func(t *testing.T) {
			st := newStore(t)
			if c.wantFail {
				st = eventless{st.(protected)}
			}
			got := make(chan error, 1)
			start(t, testConfig(st), Handler{Kind: "pub", Policy: &retry.Never, Fn: func(ctx context.Context, _ *task.Task) error {
				err := Publish(ctx, store.Event{Topic: "t", Payload: []byte(`{}`)})
				got <- err
				return err
			}})
			tk := enqueue(t, st, store.NewTask{Kind: "pub"})
			err := <-got
			if c.wantFail != (err != nil) || c.wantFail && !errors.Is(err, task.ErrInvalid) {
				t.Fatalf("Publish = %v, want an error: %v", err, c.wantFail)
			}
			want := task.Success
			if c.wantFail {
				want = task.Failed
			}
			waitState(t, st, tk.ID, want)
		})
	}
}
