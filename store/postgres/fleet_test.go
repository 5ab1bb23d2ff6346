package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestTwoStoresClaimEachTaskOnce is two workers' processes, each with its
// own pool, claiming from one schema at once: SKIP LOCKED must hand each
// task to exactly one of them.
func TestTwoStoresClaimEachTaskOnce(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	a, b := openIn(t, schema), openIn(t, schema)
	const n = 2000
	enqueueN(t, a, n)
	ctx := bounded(t)
	var mu sync.Mutex
	counts := map[int64]int{}
	var wg sync.WaitGroup
	for i, s := range []store.Store{a, b, a, b, a, b, a, b} {
		wg.Go(func() {
			err := claimAll(ctx, s, fmt.Sprint("w", i), 1+i*7, func(id int64) {
				mu.Lock()
				counts[id]++
				mu.Unlock()
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if len(counts) != n {
		t.Errorf("%d tasks claimed, want %d", len(counts), n)
	}
	for id, c := range counts {
		if c != 1 {
			t.Errorf("task %d claimed %d times", id, c)
		}
	}
	running, err := a.ListTasks(ctx, task.Filter{States: []task.State{task.Running}})
	if err != nil || len(running) != n {
		t.Errorf("%d tasks RUNNING (%v), want %d", len(running), err, n)
	}
}

// claimAll claims limit at a time until nothing is left, passing each id
// to claimed.
func claimAll(ctx context.Context, s store.Store, worker string, limit int, claimed func(int64)) error {
	for {
		got, err := s.Claim(ctx, store.ClaimRequest{Worker: worker, Limit: limit, Lease: time.Hour})
		if err != nil {
			return err
		}
		if len(got) == 0 {
			return nil
		}
		for _, c := range got {
			claimed(c.ID)
		}
	}
}

// TestConcurrentFinishesEndTheRunOnce finishes the many tasks of one run
// from many goroutines at once: the run must end (SUCCESS) though no one
// transaction sees every other task ended, and its fan-in task must be
// released exactly when its last need succeeds.
func TestConcurrentFinishesEndTheRunOnce(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ctx := bounded(t)
	const n = 64
	var tasks []task.NewTask
	var needs []string
	for i := range n {
		name := fmt.Sprint("t", i)
		tasks = append(tasks, task.NewTask{Name: name, Kind: "leaf"})
		needs = append(needs, name)
	}
	tasks = append(tasks, task.NewTask{Name: "join", Kind: "join", Needs: needs})
	run, err := s.SubmitRun(ctx, task.NewRun{Name: "fan-in", Tasks: tasks})
	if err != nil {
		t.Fatal(err)
	}
	leaves, err := s.Claim(ctx, store.ClaimRequest{Worker: "w", Kinds: []string{"leaf"}, Limit: n})
	if err != nil || len(leaves) != n {
		t.Fatalf("claimed %d leaves (%v), want %d", len(leaves), err, n)
	}
	var wg sync.WaitGroup
	for _, c := range leaves {
		wg.Go(func() {
			errs, err := s.Finish(ctx, []store.Finish{{TaskID: c.ID, Token: c.LeaseToken, State: task.Success}})
			if err != nil || errs[0] != nil {
				t.Errorf("finish %d: %v %v", c.ID, err, errs)
			}
		})
	}
	wg.Wait()
	join, err := s.Claim(ctx, store.ClaimRequest{Worker: "w", Kinds: []string{"join"}, Limit: 1})
	if err != nil || len(join) != 1 {
		t.Fatalf("claimed %d join tasks (%v), want 1", len(join), err)
	}
	if _, err := s.Finish(ctx, []store.Finish{{TaskID: join[0].ID, Token: join[0].LeaseToken, State: task.Success}}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetRun(ctx, run.ID); err != nil || got.State != task.Success {
		t.Errorf("run = %+v (%v), want SUCCESS", got, err)
	}
}

// TestConcurrentLastTasksEndTheRun ends the last two tasks of many runs
// at once, from two stores: each run must end, whichever commits last.
func TestConcurrentLastTasksEndTheRun(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	a, b := openIn(t, schema), openIn(t, schema)
	ctx := bounded(t)
	const runs = 30
	var ids []int64
	for i := range runs {
		r, err := a.SubmitRun(ctx, task.NewRun{Name: fmt.Sprint("r", i), Tasks: []task.NewTask{
			{Name: "x", Kind: "x"}, {Name: "y", Kind: "y"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	xs, err := a.Claim(ctx, store.ClaimRequest{Worker: "wa", Kinds: []string{"x"}, Limit: runs})
	if err != nil {
		t.Fatal(err)
	}
	ys, err := b.Claim(ctx, store.ClaimRequest{Worker: "wb", Kinds: []string{"y"}, Limit: runs})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range runs {
		for s, c := range map[store.Store]task.Task{a: xs[i], b: ys[i]} {
			wg.Go(func() {
				if _, err := s.Finish(ctx, []store.Finish{{TaskID: c.ID, Token: c.LeaseToken, State: task.Success}}); err != nil {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	for _, id := range ids {
		if r, err := a.GetRun(ctx, id); err != nil || r.State != task.Success {
			t.Errorf("run %d = %+v (%v), want SUCCESS", id, r, err)
		}
	}
}
