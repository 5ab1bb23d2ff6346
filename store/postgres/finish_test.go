package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestPlainSuccessesBesideARunTask finishes, in one batch, plain successes
// of a task outside any run and of a run's task: the batch cannot take the
// one-statement path, and the run's dependent must still move.
func TestPlainSuccessesBesideARunTask(t *testing.T) {
	t.Parallel()
	s, ctx := openTest(t), bounded(t)
	run, err := s.SubmitRun(ctx, task.NewRun{Name: "r", Tasks: []task.NewTask{
		{Name: "a", Kind: "k"}, {Name: "b", Kind: "k", Needs: []string{"a"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(ctx, []task.NewTask{{Kind: "k"}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Claim(ctx, store.ClaimRequest{Worker: "w", Limit: 10, Lease: time.Minute})
	if err != nil || len(got) != 2 {
		t.Fatalf("claimed %d tasks (%v), want a and the lone task", len(got), err)
	}
	fs := make([]store.Finish, len(got))
	for i, c := range got {
		fs[i] = store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Success}
	}
	errs, err := s.Finish(ctx, fs)
	if err != nil || errs[0] != nil || errs[1] != nil {
		t.Fatalf("finish: %v %v", err, errs)
	}
	ts, err := s.ListTasks(ctx, task.Filter{RunID: run.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ts {
		if want := map[string]task.State{"a": task.Success, "b": task.Ready}[x.Name]; x.State != want {
			t.Errorf("task %s is %s, want %s", x.Name, x.State, want)
		}
	}
	for _, c := range got {
		as, err := s.Attempts(ctx, c.ID)
		if err != nil || len(as) != 1 || as[0].Outcome != task.OutcomeSuccess || as[0].Worker != "w" || as[0].StartedAt.IsZero() {
			t.Errorf("attempts of task %d: %+v (%v)", c.ID, as, err)
		}
	}
}

// TestPlainSuccessesWithAStaleToken: in a batch of plain successes outside
// runs, the item whose lease was lost is rejected and writes nothing; the
// others apply.
func TestPlainSuccessesWithAStaleToken(t *testing.T) {
	t.Parallel()
	s, ctx := openTest(t), bounded(t)
	enqueueN(t, s, 3)
	got, err := s.Claim(ctx, store.ClaimRequest{Worker: "w", Limit: 3, Lease: time.Minute})
	if err != nil || len(got) != 3 {
		t.Fatalf("claimed %d (%v)", len(got), err)
	}
	fs := make([]store.Finish, len(got))
	for i, c := range got {
		fs[i] = store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Success}
	}
	fs[1].Token--
	errs, err := s.Finish(ctx, fs)
	if err != nil || errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], task.ErrLeaseLost) {
		t.Fatalf("finish: %v %v", err, errs)
	}
	if x, _ := s.GetTask(ctx, got[1].ID); x.State != task.Running {
		t.Errorf("the stale item's task is %s, want still RUNNING", x.State)
	}
	if as, _ := s.Attempts(ctx, got[1].ID); len(as) != 1 || as[0].Outcome != task.OutcomeRunning {
		t.Errorf("the stale item's attempts: %+v, want its open attempt only", as)
	}
}
