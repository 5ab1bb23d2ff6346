package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/grit-run/grit/retention"
	"github.com/grit-run/grit/task"
)

// TestEnginePrunesWhatItsRetentionLetsGo: an engine with a retention of
// a millisecond deletes its finished tasks (and their attempts) within a
// few prune turns, on either store, and keeps a dead letter.
func TestEnginePrunesWhatItsRetentionLetsGo(t *testing.T) {
	t.Parallel()
	for name, open := range bothStores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			cfg := testConfig(st)
			pol, err := retention.Parse("success=1ms,failed=1ms")
			if err != nil {
				t.Fatal(err)
			}
			cfg.Retention, cfg.PruneEvery = pol, 50*time.Millisecond
			var ok, poison []int64
			for range 5 {
				ok = append(ok, enqueue(t, st, task.NewTask{Kind: "ok"}).ID)
			}
			poison = append(poison, enqueue(t, st, task.NewTask{Kind: "bad", Policy: "5 1ms"}).ID)
			start(t, cfg,
				Handler{Kind: "ok", Fn: func(context.Context, *task.Task) error { return nil }},
				Handler{Kind: "bad", Fn: func(context.Context, *task.Task) error { return errors.New("KeyError: 42") }})
			waitState(t, st, poison[0], task.DeadLetter)
			waitFor(t, 20*time.Second, func() bool {
				for _, id := range ok {
					if _, err := st.GetTask(context.Background(), id); !errors.Is(err, task.ErrNotFound) {
						return false
					}
				}
				return true
			}, func() string { return "the finished tasks to be pruned" })
			if got, err := st.GetTask(context.Background(), poison[0]); err != nil || got.State != task.DeadLetter {
				t.Errorf("the dead letter: %+v, %v; want it kept", got, err)
			}
			if as, err := st.Attempts(context.Background(), ok[0]); len(as) != 0 || err != nil && !errors.Is(err, task.ErrNotFound) {
				t.Errorf("a pruned task's attempts: %v, %v; want none", as, err)
			}
		})
	}
}
