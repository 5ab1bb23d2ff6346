package engine

import (
	"context"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// lateListener is a store whose notifications start only when the test
// closes listening, and which reports each time the claim loop asks for the
// next due time, as it does before it sleeps.
type lateListener struct {
	store.Store
	listening chan struct{}
	asked     chan struct{}
}

func (s *lateListener) Wake(ctx context.Context) (<-chan struct{}, error) {
	select {
	case <-s.listening:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	ch := make(chan struct{})
	context.AfterFunc(ctx, func() { close(ch) })
	return ch, nil
}

func (s *lateListener) NextDue(ctx context.Context, req store.ClaimRequest) (time.Time, bool, error) {
	select {
	case s.asked <- struct{}{}:
	default:
	}
	return s.Store.NextDue(ctx, req)
}

// TestWorkEnqueuedBeforeListeningStarts: the engine starts claiming before
// its listener is up, so a task another process enqueues in between
// notifies no one. Once listening, the engine claims again: the task starts
// then, not at the next poll an hour later.
func TestWorkEnqueuedBeforeListeningStarts(t *testing.T) {
	st := &lateListener{Store: newStore(t), listening: make(chan struct{}), asked: make(chan struct{}, 1)}
	cfg := testConfig(st)
	cfg.Poll = time.Hour
	start(t, cfg, Handler{Kind: "ok", Fn: func(context.Context, *task.Task) error { return nil }})
	select {
	case <-st.asked: // the first claim found nothing; the loop goes to sleep
	case <-time.After(10 * time.Second):
		t.Fatal("the claim loop did not look for work within 10s of Start")
	}
	tk := enqueue(t, st, store.NewTask{Kind: "ok"}) // through the store: no one is told
	close(st.listening)
	waitState(t, st, tk.ID, task.Success)
}
