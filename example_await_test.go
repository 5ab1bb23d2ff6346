package grit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/grit-run/grit"
)

// A handler fans work out to children, enqueued under ChildKey keys so
// that a retry enqueues none twice, and awaits them with its slot free
// (until the last ends, the task is SENSING and the handler's attempt
// has ended); then it reads what each set with SetResult, and sets its
// own.
func ExampleAwait() {
	dir, _ := os.MkdirTemp("", "grit-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	c, err := grit.Open(ctx, "sqlite:"+filepath.Join(dir, "grit.db"), grit.Config{Concurrency: 1})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	grit.Handle(c, "square", func(ctx context.Context, n int) error {
		return grit.SetResult(ctx, n*n)
	}, grit.HandlerConfig{})
	done := make(chan struct{})
	grit.Handle(c, "sum", func(ctx context.Context, ns []int) error {
		var ids []int64
		for _, n := range ns {
			e, err := c.Enqueue(ctx, "square", n, grit.WithKey(grit.ChildKey(ctx, fmt.Sprint(n))))
			if err != nil {
				return err
			}
			ids = append(ids, e.ID)
		}
		kids, err := grit.Await(ctx, ids...)
		if err != nil {
			return err // the task waits, SENSING, until its children end
		}
		sum := 0
		for _, k := range kids {
			var sq int
			if err := k.Decode(&sq); err != nil {
				return err
			}
			fmt.Println(k.State, sq)
			sum += sq
		}
		defer close(done)
		return grit.SetResult(ctx, sum)
	}, grit.HandlerConfig{})

	tk, _ := c.Enqueue(ctx, "sum", []int{1, 2, 3})
	c.Start(ctx)
	<-done
	c.Stop(ctx)
	t, _ := c.Task(ctx, tk.ID)
	fmt.Println("sum", string(t.Result))
	// Output:
	// SUCCESS 1
	// SUCCESS 4
	// SUCCESS 9
	// sum 14
}
