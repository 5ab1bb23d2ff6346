package grit_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/task"
)

// BenchmarkNoopAttempt is the cost of a no-op attempt worked end to end
// (enqueue, claim, run, finish) on SQLite by a started client with one
// slot: in this process, and isolated in a warm child. The difference
// is what isolation adds to an attempt.
func BenchmarkNoopAttempt(b *testing.B) {
	for _, bc := range []struct{ name, kind string }{{"inprocess", "inproc.noop"}, {"isolated", "iso.noop"}} {
		b.Run(bc.name, func(b *testing.B) { benchNoops(b, bc.kind) })
	}
}

func benchNoops(b *testing.B, kind string) {
	ctx := context.Background()
	c, err := grit.Open(ctx, "sqlite:"+filepath.Join(b.TempDir(), "grit.db"), grit.Config{Concurrency: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	registerIsolated(c)
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		c.Stop(ctx)
	}()
	// A first task starts the child, which the timing then finds warm.
	runNoops(b, c, kind, 1)
	b.ResetTimer()
	runNoops(b, c, kind, b.N)
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/attempt")
}

// runNoops enqueues n tasks of kind, in batches, and waits until every
// task of kind has succeeded.
func runNoops(b *testing.B, c *grit.Client, kind string, n int) {
	ctx := context.Background()
	var last int64
	for done := 0; done < n; done += 500 {
		ts := make([]task.NewTask, min(500, n-done))
		for i := range ts {
			ts[i] = task.NewTask{Kind: kind, Args: []byte("{}")}
		}
		got, err := c.EnqueueMany(ctx, ts)
		if err != nil {
			b.Fatal(err)
		}
		last = got[len(got)-1].ID
	}
	// Tasks are claimed oldest first: once the last is done, few if any
	// are left, and one query finds them.
	poll.Until(b, 5*time.Minute, fmt.Sprintf("the %d %s tasks to be done", n, kind), func() bool {
		if t, err := c.Task(ctx, last); err != nil {
			b.Fatal(err)
		} else if t.State != task.Success {
			return false
		}
		left, err := c.Tasks(ctx, task.Filter{Kind: kind, States: []task.State{task.Ready, task.Running, task.Retrying}, Limit: 1})
		if err != nil {
			b.Fatal(err)
		}
		return len(left) == 0
	})
}
