package grit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// A run that failed is redriven once the cause is fixed: what failed runs
// again, with fresh attempts, and what succeeded does not.
func ExampleClient_Redrive() {
	dir, _ := os.MkdirTemp("", "grit-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	c, err := grit.Open(ctx, "sqlite:"+filepath.Join(dir, "grit.db"), grit.Config{})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	var broken atomic.Bool
	var loads atomic.Int32
	broken.Store(true)
	grit.Handle(c, "extract", func(ctx context.Context, _ any) error {
		fmt.Println("extract")
		return nil
	}, grit.HandlerConfig{})
	grit.Handle(c, "load", func(ctx context.Context, _ any) error {
		loads.Add(1)
		if broken.Load() {
			fmt.Println("load: the warehouse refuses")
			return retry.Permanent(errors.New("warehouse: table locked"))
		}
		return nil // its line is printed after the run: it may run before Redrive returns
	}, grit.HandlerConfig{})

	run, _ := c.SubmitRun(ctx, task.NewRun{Name: "nightly", Tasks: []task.NewTask{
		{Name: "extract", Kind: "extract"},
		{Name: "load", Kind: "load", Needs: []string{"extract"}},
	}})
	c.Start(ctx)
	defer c.Stop(ctx)
	fmt.Println(waitRunEnd(ctx, c, run.ID))

	broken.Store(false) // the cause is fixed
	r, err := c.Redrive(ctx, run.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Run.State, len(r.Tasks), "task")
	fmt.Println(waitRunEnd(ctx, c, run.ID))
	fmt.Println("load ran", loads.Load(), "times")
	// Output:
	// extract
	// load: the warehouse refuses
	// FAILED
	// RUNNING 1 task
	// SUCCESS
	// load ran 2 times
}

// waitRunEnd polls a run until it ends, for a few seconds at most.
func waitRunEnd(ctx context.Context, c *grit.Client, id int64) task.State {
	state := task.State("still RUNNING")
	poll.Wait(10*time.Second, func() bool {
		r, err := c.Run(ctx, id)
		if err == nil && r.State.Terminal() {
			state = r.State
		}
		return err == nil && r.State.Terminal()
	})
	return state
}
