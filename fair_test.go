package grit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/store/sqlite/sqlitetest"
	"github.com/grit-run/grit/task"
)

func TestFairClaimsSQLite(t *testing.T) {
	t.Parallel()
	testFairClaims(t, "sqlite:"+sqlitetest.Path(t))
}

func TestFairClaimsPostgres(t *testing.T) {
	t.Parallel()
	testFairClaims(t, pgtest.WithSchema(pgtest.NewSchema(t)))
}

// testFairClaims: 3,000 tasks of one tenant are enqueued first, then 100
// tasks of ten other tenants; a worker of Concurrency 10 runs the 100
// within its first 400 jobs, not after the 3,000.
func testFairClaims(t *testing.T, dsn string) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c, err := grit.Open(ctx, dsn, grit.Config{Concurrency: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	type job struct{ Tenant string }
	var mu sync.Mutex
	jobs, others, lastOther := 0, 0, 0
	allOthers := make(chan struct{})
	err = grit.Handle(c, "job", func(_ context.Context, j job) error {
		mu.Lock()
		defer mu.Unlock()
		jobs++
		if j.Tenant != "big" {
			if others++; others == 100 {
				lastOther = jobs
				close(allOthers)
			}
		}
		return nil
	}, grit.HandlerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	of := func(tenant string, n int) []task.NewTask {
		args, _ := json.Marshal(job{Tenant: tenant})
		ts := make([]task.NewTask, n)
		for i := range ts {
			ts[i] = task.NewTask{Kind: "job", Args: args, Tenant: tenant}
		}
		return ts
	}
	if _, err := c.EnqueueMany(ctx, of("big", 3000)); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := c.EnqueueMany(ctx, of(fmt.Sprintf("small-%d", i), 10)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Stop(context.Background())
	select {
	case <-allOthers:
	case <-ctx.Done():
		t.Fatalf("the 100 tasks of the ten small tenants were not all done: %v", context.Cause(ctx))
	}
	mu.Lock()
	defer mu.Unlock()
	if lastOther > 400 {
		t.Errorf("the last of the small tenants' 100 tasks was job %d, want within the first 400", lastOther)
	}
	t.Logf("the small tenants' 100 tasks were done by job %d of 3,100", lastOther)
}
