package grit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/grit-run/grit"
)

// A handler waits for a message sent to its task, for a day at most,
// with its slot free (until the message comes, the task is SENSING and
// the handler's attempt has ended); a message sent before it reaches the
// receive, as here, is kept for it. A receive with no message by its
// timeout (here 0: do not wait) fails with grit.ErrReceiveTimeout.
func ExampleReceive() {
	dir, _ := os.MkdirTemp("", "grit-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	c, err := grit.Open(ctx, "sqlite:"+filepath.Join(dir, "grit.db"), grit.Config{})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	type approval struct{ By string }
	done := make(chan struct{})
	grit.Handle(c, "refund", func(ctx context.Context, _ struct{}) error {
		a, err := grit.Receive[approval](ctx, "approval", 24*time.Hour)
		if err != nil {
			return err // the task waits, SENSING, until the approval comes
		}
		fmt.Println("approved by", a.By)
		_, err = grit.Receive[string](ctx, "note", 0)
		fmt.Println("a note:", errors.Is(err, grit.ErrReceiveTimeout))
		close(done)
		return nil
	}, grit.HandlerConfig{})

	tk, _ := c.Enqueue(ctx, "refund", struct{}{})
	c.SendToTask(ctx, tk.ID, "approval", approval{By: "ana"})
	c.Start(ctx)
	<-done
	c.Stop(ctx)
	// Output:
	// approved by ana
	// a note: true
}
