package postgres_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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

// TestFinishDoesNotSplitAFullDisk: a batch the database fails in a way
// that is no row's refusal (here disk_full, SQLSTATE 53100, raised by a
// trigger for one task as a full disk would for any) fails as a whole,
// is not split to find a row at fault, and writes nothing; the same
// trigger raising an ordinary exception (P0001) refuses its row alone.
func TestFinishDoesNotSplitAFullDisk(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		code  string
		whole bool
	}{{"disk_full", true}, {"raise_exception", false}} {
		t.Run(c.code, func(t *testing.T) {
			t.Parallel()
			schema := newSchema(t)
			s, ctx := openIn(t, schema), bounded(t)
			if _, err := s.Enqueue(ctx, []task.NewTask{{Kind: "ok"}, {Kind: "bad"}}); err != nil {
				t.Fatal(err)
			}
			got, err := s.Claim(ctx, store.ClaimRequest{Worker: "w", Limit: 10, Lease: time.Minute})
			if err != nil || len(got) != 2 {
				t.Fatalf("claimed %d tasks (%v), want 2", len(got), err)
			}
			q := pgx.Identifier{schema}.Sanitize()
			for _, stmt := range []string{
				`CREATE FUNCTION ` + q + `.fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION USING ERRCODE = '` + c.code + `', MESSAGE = 'could not extend file'; END $$`,
				`CREATE TRIGGER fail BEFORE UPDATE ON ` + q + `.tasks FOR EACH ROW WHEN (NEW.state = 'SUCCESS' AND NEW.kind = 'bad') EXECUTE FUNCTION ` + q + `.fail()`,
			} {
				if _, err := admin(t).Exec(ctx, stmt); err != nil {
					t.Fatal(err)
				}
			}
			fs := []store.Finish{{TaskID: got[0].ID, Token: got[0].LeaseToken, State: task.Success}, {TaskID: got[1].ID, Token: got[1].LeaseToken, State: task.Success}}
			errs, err := s.Finish(ctx, fs)
			if c.whole {
				if err == nil || !strings.Contains(err.Error(), "could not extend file") || errs != nil {
					t.Fatalf("finish: %v, %v; want the batch's error", errs, err)
				}
				for _, tk := range got {
					if cur, _ := s.GetTask(ctx, tk.ID); cur.State != task.Running {
						t.Errorf("task %d (%s) is %s, want RUNNING: nothing written", tk.ID, tk.Kind, cur.State)
					}
				}
				return
			}
			if err != nil || (errs[0] == nil) == (errs[1] == nil) || !errors.Is(errors.Join(errs...), task.ErrRefused) {
				t.Fatalf("finish: %v, %v; want the bad task's refusal alone", errs, err)
			}
		})
	}
}
