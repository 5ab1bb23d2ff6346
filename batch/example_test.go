package batch_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/grit-run/grit/batch"
	"github.com/grit-run/grit/retry"
)

// Items go out three at a time; the first flush meets a transient failure
// and is retried as a whole; Close flushes the item left over.
func Example() {
	failed := false
	b, err := batch.New(batch.Config[string, string]{
		MaxSize:  3,
		Interval: time.Hour, // only size and Close flush here
		Flush: func(ctx context.Context, words []string) ([]string, error) {
			if !failed {
				failed = true
				fmt.Println("flush", words, "fails")
				return nil, retry.Transient(errors.New("unavailable"))
			}
			fmt.Println("flush", words)
			out := make([]string, len(words))
			for i, w := range words {
				out[i] = strings.ToUpper(w)
			}
			return out, nil
		},
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	var fs []*batch.Future[string]
	for _, w := range []string{"a", "bb", "ccc", "dddd"} {
		fs = append(fs, b.Send(ctx, w))
	}
	for _, f := range fs[:3] {
		fmt.Println(f.Wait(ctx))
	}
	if err := b.Close(ctx); err != nil {
		panic(err)
	}
	fmt.Println(fs[3].Wait(ctx))
	_, err = b.Do(ctx, "late")
	fmt.Println(err)
	// Output:
	// flush [a bb ccc] fails
	// flush [a bb ccc]
	// A <nil>
	// BB <nil>
	// CCC <nil>
	// flush [dddd]
	// DDDD <nil>
	// batch: closed
}

// A downstream that rejects one item of a batch fails that item's future
// alone.
func ExampleItemErrors() {
	b, err := batch.New(batch.Config[int, int]{
		MaxSize: 3,
		Flush: func(ctx context.Context, ns []int) ([]int, error) {
			res := make([]int, len(ns))
			rejected := make(batch.ItemErrors, len(ns))
			for i, n := range ns {
				if n < 0 {
					rejected[i] = fmt.Errorf("%d: negative", n)
					continue
				}
				res[i] = n * n
			}
			return res, rejected
		},
	})
	if err != nil {
		panic(err)
	}
	defer b.Close(context.Background())
	ctx := context.Background()
	fs := []*batch.Future[int]{b.Send(ctx, 2), b.Send(ctx, -1), b.Send(ctx, 3)}
	for _, f := range fs {
		fmt.Println(f.Wait(ctx))
	}
	// Output:
	// 4 <nil>
	// 0 -1: negative
	// 9 <nil>
}

// A batch that fails as a whole fails every future in it with a
// *batch.Error, which says how many items and attempts, and wraps the
// cause.
func ExampleError() {
	errDown := errors.New("enqueue: permission denied")
	b, err := batch.New(batch.Config[int, int]{
		MaxSize: 2,
		Flush: func(ctx context.Context, ns []int) ([]int, error) {
			return nil, retry.Permanent(errDown)
		},
	})
	if err != nil {
		panic(err)
	}
	defer b.Close(context.Background())
	ctx := context.Background()
	f := b.Send(ctx, 1)
	b.Send(ctx, 2)
	_, err = f.Wait(ctx)
	var be *batch.Error
	fmt.Println(err)
	fmt.Println(errors.Is(err, errDown), errors.As(err, &be) && be.Items == 2)
	// Output:
	// batch: flush of 2 items failed after 1 attempt (not retryable): enqueue: permission denied
	// true true
}
