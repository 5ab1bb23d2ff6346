package sqlite_test

import (
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestClaimTask: ClaimTask takes the task it names when a claim would,
// and nothing else: not the older task due beside it, not a task of a
// kind the request leaves out, not a task that is not due yet.
func TestClaimTask(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	ts, err := s.Enqueue(ctx, []task.NewTask{
		{Kind: "mail"}, {Kind: "mail"}, {Kind: "sms"},
		{Kind: "mail", RunAt: time.Now().Add(time.Hour)},
	})
	if err != nil {
		t.Fatal(err)
	}
	older, chosen, sms, later := ts[0].ID, ts[1].ID, ts[2].ID, ts[3].ID
	req := store.ClaimRequest{Worker: "w", Kinds: []string{"mail"}, Limit: 10}
	for _, id := range []int64{sms, later} {
		got, err := s.ClaimTask(ctx, req, id)
		if err != nil || len(got) != 0 {
			t.Errorf("ClaimTask(%d) = %v, %v: want nothing (another kind, or not due)", id, got, err)
		}
	}
	got, err := s.ClaimTask(ctx, req, chosen)
	if err != nil || len(got) != 1 || got[0].ID != chosen || got[0].State != task.Running || got[0].Attempt != 1 {
		t.Fatalf("ClaimTask(%d) = %+v, %v: want that task RUNNING on its first attempt", chosen, got, err)
	}
	if again, err := s.ClaimTask(ctx, req, chosen); err != nil || len(again) != 0 {
		t.Errorf("a second ClaimTask took the running task again: %v, %v", again, err)
	}
	left, err := s.GetTask(ctx, older)
	if err != nil || left.State != task.Ready {
		t.Errorf("the older task is %s (%v), want READY: ClaimTask took only the task it named", left.State, err)
	}
	if _, err := s.ClaimTask(ctx, store.ClaimRequest{}, chosen); err == nil {
		t.Error("ClaimTask without a worker did not fail")
	}
}
