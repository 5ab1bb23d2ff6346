package grit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// A task that ends FAILED (here a permanent failure; also retries run out)
// enqueues its handler's catch task, once, with the failure. The
// directive //grit:retry 3 1s 1m catch release_stock on the handler's
// func writes the same HandlerConfig (grit gen, docs/directives.md).
func ExampleHandlerConfig_catch() {
	dir, _ := os.MkdirTemp("", "grit-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	c, err := grit.Open(ctx, "sqlite:"+filepath.Join(dir, "grit.db"), grit.Config{})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	type order struct{ ID string }
	grit.Handle(c, "ship", func(ctx context.Context, o order) error {
		return retry.Permanent(errors.New("address unknown"))
	}, grit.HandlerConfig{Policy: "3 1s 1m", Catch: "release_stock"})
	caught := make(chan task.Caught, 1)
	grit.Handle(c, "release_stock", func(ctx context.Context, k task.Caught) error {
		caught <- k
		return nil
	}, grit.HandlerConfig{})

	c.Enqueue(ctx, "ship", order{ID: "o-7"})
	c.Start(ctx)
	select {
	case k := <-caught:
		fmt.Printf("%s %s after %d attempt: %s\n", k.Kind, k.Args, k.Attempts, k.Error)
	case <-time.After(20 * time.Second):
		fmt.Println("not caught")
	}
	c.Stop(ctx)
	// Output:
	// ship {"ID":"o-7"} after 1 attempt: address unknown
}
