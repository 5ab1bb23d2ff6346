package gate_test

import (
	"context"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestPausedBackGivesClaimedTasksBackUnstarted: tasks claimed before a
// pause, checked when they would start, are given back where they were
// (READY, or RETRYING for a retry), using no attempt and writing none,
// counted as a wait; the pause is learned from the store's announcement
// (FollowPauses), without a Refresh; others start.
func TestPausedBackGivesClaimedTasksBackUnstarted(t *testing.T) {
	t.Parallel()
	f := setup(t, claimers[0], gate.Protection{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	go f.g.FollowPauses(ctx, started)
	<-started
	f.enqueue(2, task.NewTask{Queue: "mail"})
	f.enqueue(1, task.NewTask{Queue: "other"})
	claimed := f.claim(10).Tasks
	if len(claimed) != 3 {
		t.Fatalf("claimed %d tasks, want 3", len(claimed))
	}
	if _, err := f.st.Pause(ctx, store.Pause{Scope: store.ScopeQueue, Name: "mail"}); err != nil {
		t.Fatal(err)
	}
	var kept []task.Task
	var back []gate.Back
	poll.Until(t, 10*time.Second, "the gate to hear of the pause", func() bool {
		kept, back = f.g.SplitPaused(claimed, "w", f.clock.Now())
		return len(back) == 2
	})
	if len(kept) != 1 || kept[0].Queue != "other" {
		t.Fatalf("kept %+v, want the other queue's task alone", kept)
	}
	fs := make([]store.Finish, len(back))
	for i, b := range back {
		fs[i] = b.Finish
	}
	if _, err := f.st.Finish(ctx, fs); err != nil {
		t.Fatal(err)
	}
	for _, b := range back {
		got, err := f.st.GetTask(ctx, b.Task.ID)
		if err != nil {
			t.Fatal(err)
		}
		as, err := f.st.Attempts(ctx, b.Task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != task.Ready || got.Attempt != 0 || got.Waits != 1 || len(as) != 0 {
			t.Errorf("task %d given back: %s, attempt %d, %d waits, %d attempt rows; want READY, 0, 1, none", got.ID, got.State, got.Attempt, got.Waits, len(as))
		}
	}
}
