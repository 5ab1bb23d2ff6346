package gritbench

import (
	"context"
	"testing"

	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/store/postgres/pgtest"
)

// TestRunOnPostgres runs the whole benchmark at a small size on PostgreSQL,
// with worker processes that learn of new tasks from the store's
// notifications. It asserts no speed.
func TestRunOnPostgres(t *testing.T) {
	open := func() (Target, error) {
		schema := pgtest.NewSchema(t)
		st, err := postgres.OpenConfig(context.Background(), postgres.Config{DSN: pgtest.DSN(), Schema: schema})
		return Target{Store: st, DSN: pgtest.WithSchema(schema)}, err
	}
	cfg := Config{
		Tasks: 500, Batch: 100, Retries: 20, Procs: 3, Workers: []int{1, 3}, Latency: 30,
		Engine: wholeRun, Takeover: true, MemoryTasks: 2000,
		APITasks: 200, APICallers: 8, APIBatch: 50, Spawn: spawnTestBinary(wholeRun),
	}
	r, err := Run(context.Background(), open, cfg, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.WorkProcs) != 2 || r.WorkProcs[1].Workers != 3 || r.WorkProcs[1].PerSec <= 0 {
		t.Errorf("work with processes %+v", r.WorkProcs)
	}
	if r.StartP50 <= 0 || r.StartMax < r.StartP99 || r.StartVia != "store notification, worker process" {
		t.Errorf("start latency p50 %v p99 %v max %v via %q", r.StartP50, r.StartP99, r.StartMax, r.StartVia)
	}
	if r.TakeoverS < 1 || r.TakeoverBoundS != wholeRunBound {
		t.Errorf("takeover %vs, bound %vs", r.TakeoverS, r.TakeoverBoundS)
	}
	if len(r.MemoryMiB) != 10 || r.MemoryPeakMiB <= 0 {
		t.Errorf("memory %v peak %v", r.MemoryMiB, r.MemoryPeakMiB)
	}
	checkAPI(t, cfg, r)
	t.Logf("%+v", r)
}
