// Command isolated runs a handler that hangs on its first attempt, in a
// C-call-like way that never looks at its context, as an isolated
// handler: its attempt runs in a child process (this program, started
// again), which the worker kills at the timeout and the grace, and the
// retry succeeds. A handler that crashes its process ends only its own
// attempt.
//
//	go run ./examples/isolated
//
// The one line main needs for isolation is the IsChild guard: in a
// child, main must reach Handle and Start, and nothing else.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/task"
)

func main() {
	ctx := context.Background()
	dir := os.Getenv("ISOLATED_DIR") // the worker's: its children run with the same environment
	if !grit.IsChild() {
		var err error
		if dir, err = os.MkdirTemp("", "isolated"); err != nil {
			fail(err)
		}
		defer os.RemoveAll(dir)
		os.Setenv("ISOLATED_DIR", dir)
	}
	c, err := grit.Open(ctx, "sqlite:"+filepath.Join(dir, "grit.db"), grit.Config{})
	if err != nil {
		fail(err)
	}
	defer c.Close()
	grit.Handle(c, "render", func(ctx context.Context, _ struct{}) error {
		if a, _ := grit.AttemptFrom(ctx); a.Number == 1 {
			fmt.Printf("  render, attempt 1, in process %d: hangs without looking at its context\n", os.Getpid())
			select {}
		}
		fmt.Printf("  render, attempt 2, in process %d: done\n", os.Getpid())
		return nil
	}, grit.HandlerConfig{Isolate: true, Timeout: time.Second, Policy: "3 100ms"})
	grit.Handle(c, "crash", func(context.Context, struct{}) error {
		os.Exit(3)
		return nil
	}, grit.HandlerConfig{Isolate: true, Policy: "never"})

	if !grit.IsChild() { // what only the worker does
		fmt.Printf("worker %d\n", os.Getpid())
		for _, kind := range []string{"render", "crash"} {
			if _, err := c.Enqueue(ctx, kind, struct{}{}, grit.WithGrace(time.Second)); err != nil {
				fail(err)
			}
		}
	}
	if err := c.Start(ctx); err != nil { // in a child, it serves the worker and does not return
		fail(err)
	}
	defer c.Stop(ctx)
	for _, id := range []int64{1, 2} {
		t := wait(ctx, c, id)
		fmt.Printf("task %d (%s): %s after %d attempts: %s\n", t.ID, t.Kind, t.State, t.Attempt, t.LastError)
	}
}

// wait waits for task id to end.
func wait(ctx context.Context, c *grit.Client, id int64) task.Task {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		t, err := c.Task(ctx, id)
		if err != nil {
			fail(err)
		}
		if t.State.Terminal() {
			return t
		}
	}
	fail(errors.New("a task did not end within a minute"))
	return task.Task{}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "isolated:", err)
	os.Exit(1)
}
