package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

func Example() {
	dir, _ := os.MkdirTemp("", "grit")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	s, err := sqlite.Open(ctx, "sqlite:"+filepath.Join(dir, "grit.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	run, _ := s.SubmitRun(ctx, task.NewRun{Name: "nightly", Tasks: []task.NewTask{
		{Name: "fetch", Kind: "fetch"},
		{Name: "report", Kind: "report", Needs: []string{"fetch"}},
	}})
	claimed, _ := s.Claim(ctx, store.ClaimRequest{Worker: "w1", Limit: 10, Lease: time.Minute})
	for _, t := range claimed {
		fmt.Println("claimed", t.Name, "attempt", t.Attempt)
		s.Finish(ctx, []store.Finish{{TaskID: t.ID, Token: t.LeaseToken, State: task.Success}})
	}
	next, _ := s.Claim(ctx, store.ClaimRequest{Worker: "w1", Limit: 10, Lease: time.Minute})
	fmt.Println("then claimed", next[0].Name)
	s.Finish(ctx, []store.Finish{{TaskID: next[0].ID, Token: next[0].LeaseToken, State: task.Success}})

	r, _ := s.GetRun(ctx, run.ID)
	fmt.Println("run", r.State)
	// Output:
	// claimed fetch attempt 1
	// then claimed report
	// run SUCCESS
}
