package grit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/rate"
)

// A kind whose downstream takes two calls a second gets a rate: its
// tasks start at most two a second, one at a time, across every worker of
// the store; those past it wait their turn without using an attempt.
func ExampleClient_SetRate() {
	dir, _ := os.MkdirTemp("", "grit-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	c, err := grit.Open(ctx, "sqlite:"+filepath.Join(dir, "grit.db"), grit.Config{})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	per, _ := rate.ParseRate("2/s")
	if err := c.SetRate(ctx, "kind", "geocode", rate.Limit{Rate: per, Burst: 1}); err != nil {
		panic(err)
	}
	rs, _ := c.Rates(ctx)
	fmt.Println(rs[0].Scope, rs[0].Name, rs[0].Limit)

	var mu sync.Mutex
	var starts []time.Time
	done := make(chan struct{})
	grit.Handle(c, "geocode", func(ctx context.Context, _ any) error {
		mu.Lock()
		defer mu.Unlock()
		if starts = append(starts, time.Now()); len(starts) == 3 {
			close(done)
		}
		return nil
	}, grit.HandlerConfig{})
	for range 3 {
		c.Enqueue(ctx, "geocode", nil)
	}
	c.Start(ctx)
	defer c.Stop(ctx)
	select {
	case <-done:
	case <-time.After(time.Minute):
		fmt.Println("the three calls did not start within a minute")
		return
	}
	mu.Lock()
	defer mu.Unlock()
	fmt.Println("3 calls; the third a second or so after the first:", starts[2].Sub(starts[0]) >= 900*time.Millisecond)
	// Output:
	// kind geocode 2/s burst 1
	// 3 calls; the third a second or so after the first: true
}
