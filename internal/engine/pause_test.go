package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestPauseStopsClaimsFleetWide: a paused queue's and a paused kind's
// tasks are not claimed, on either store, while the others run; they
// use no attempt; resumed, they run within a heartbeat.
func TestPauseStopsClaimsFleetWide(t *testing.T) {
	t.Parallel()
	for name, open := range bothStores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			p, ok := st.(store.Pauser)
			if !ok {
				t.Fatalf("%T keeps no pauses", st)
			}
			ctx := context.Background()
			for _, ps := range []store.Pause{{Scope: store.ScopeQueue, Name: "mail"}, {Scope: store.ScopeKind, Name: "charge"}} {
				if _, err := p.Pause(ctx, ps); err != nil {
					t.Fatal(err)
				}
			}
			var ran atomic.Int64
			fn := func(context.Context, *task.Task) error { ran.Add(1); return nil }
			var paused, free []int64
			for i := range 5 {
				paused = append(paused, enqueue(t, st, task.NewTask{Kind: "send", Queue: "mail"}).ID)
				paused = append(paused, enqueue(t, st, task.NewTask{Kind: "charge", Args: []byte(fmt.Sprintf(`{"n":%d}`, i))}).ID)
				free = append(free, enqueue(t, st, task.NewTask{Kind: "send"}).ID)
			}
			e := start(t, testConfig(st), Handler{Kind: "send", Fn: fn}, Handler{Kind: "charge", Fn: fn})
			for _, id := range free {
				waitState(t, st, id, task.Success)
			}
			// A few more rounds of the claim loop: the paused tasks are
			// still not taken.
			after, claims := e.Stats().Claimed.Load(), e.Stats().Claims.Load()
			waitFor(t, 10*time.Second, func() bool { return e.Stats().Claims.Load() >= claims+3 }, func() string { return "the claim loop to go round" })
			for _, id := range paused {
				got, err := st.GetTask(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if got.State != task.Ready || got.Attempt != 0 {
					t.Errorf("paused task %d (%s, queue %s) is %s at attempt %d, want READY and untouched", id, got.Kind, got.Queue, got.State, got.Attempt)
				}
			}
			if e.Stats().Claimed.Load() != after {
				t.Errorf("the engine claimed %d tasks while only paused ones were left", e.Stats().Claimed.Load()-after)
			}
			for _, ps := range []store.Pause{{Scope: store.ScopeQueue, Name: "mail"}, {Scope: store.ScopeKind, Name: "charge"}} {
				if _, err := p.Resume(ctx, ps.Scope, ps.Name); err != nil {
					t.Fatal(err)
				}
			}
			e.Wake()
			for _, id := range paused {
				if got := waitState(t, st, id, task.Success); got.Attempt != 1 {
					t.Errorf("task %d succeeded on attempt %d, want 1: the pause used none", id, got.Attempt)
				}
			}
		})
	}
}
