package grit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/retry"
)

// A handler whose timeout is grit.AutoTimeout gets one learned from its
// kind's successful runs: 5 × their p99, within a floor and a ceiling.
// Until enough runs are on record (20 by default) it gets the stated
// default, here 10m; the attempt says which it got and why.
func ExampleAutoTimeout() {
	dir, _ := os.MkdirTemp("", "grit-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	c, err := grit.Open(ctx, "sqlite:"+filepath.Join(dir, "grit.db"), grit.Config{
		AutoTimeouts: grit.AutoTimeouts{Default: 10 * time.Minute},
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	done := make(chan struct{})
	grit.Handle(c, "report", func(ctx context.Context, _ struct{}) error {
		a, _ := grit.AttemptFrom(ctx)
		fmt.Printf("timeout %s (%s)\n", retry.FormatDuration(a.Timeout), a.TimeoutSource)
		close(done)
		return nil
	}, grit.HandlerConfig{Timeout: grit.AutoTimeout})

	c.Enqueue(ctx, "report", struct{}{})
	c.Start(ctx)
	<-done
	c.Stop(ctx)
	// Output:
	// timeout 10m (auto: default, 0 runs so far)
}
