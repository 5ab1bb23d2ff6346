package gritbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	_ "github.com/grit-run/grit/store/postgres"
	_ "github.com/grit-run/grit/store/sqlite"
)

// TestMain lets the test binary act as a benchmark worker process.
func TestMain(m *testing.M) {
	if dsn := os.Getenv("GRITBENCH_WORKER_DSN"); dsn != "" {
		os.Exit(serveWorker(dsn, os.Getenv("GRITBENCH_WORKER_CONFIG")))
	}
	os.Exit(m.Run())
}

func serveWorker(dsn, cfgJSON string) int {
	var cfg WorkerConfig
	if err := json.Unmarshal([]byte(cfgJSON), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer st.Close()
	if err := Worker(ctx, st, cfg, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func spawnTestBinary(dsn string, cfg WorkerConfig) *exec.Cmd {
	b, _ := json.Marshal(cfg)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "GRITBENCH_WORKER_DSN="+dsn, "GRITBENCH_WORKER_CONFIG="+string(b))
	return cmd
}

func sqliteTargets(t *testing.T) Opener {
	dir := t.TempDir()
	n := 0
	return func() (Target, error) {
		n++
		dsn := "sqlite:" + filepath.Join(dir, fmt.Sprintf("b%d.db", n))
		st, err := store.Open(context.Background(), dsn)
		return Target{Store: st, DSN: dsn}, err
	}
}

// TestRunMeasuresEverything runs the whole benchmark at a small size, with
// worker processes: every figure comes out, and positive. It asserts no
// speed.
func TestRunMeasuresEverything(t *testing.T) {
	var steps []string
	cfg := Config{
		Tasks: 300, Batch: 100, Retries: 30, Procs: 5, Workers: []int{1, 2}, Latency: 20,
		Lease: 2 * time.Second, Heartbeat: 500 * time.Millisecond, Takeover: true, MemoryTasks: 1000,
		APITasks: 300, APICallers: 8, APIBatch: 25, Spawn: spawnTestBinary,
	}
	r, err := Run(context.Background(), sqliteTargets(t), cfg, func(s string) { steps = append(steps, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 9 {
		t.Errorf("steps %v", steps)
	}
	if r.EnqueuePerSec <= 0 || r.WorkPerSec <= 0 || r.ExecTaskMS <= 0 || r.BareExecMS <= 0 || r.RetryLateMax < r.RetryLateP50 {
		t.Errorf("result %+v", r)
	}
	if r.RetryLateP50 < -1 {
		t.Errorf("retries started %vms before they were due", r.RetryLateP50)
	}
	if len(r.WorkProcs) != 2 || r.WorkProcs[0].Workers != 1 || r.WorkProcs[1].Workers != 2 || r.WorkProcs[1].PerSec <= 0 {
		t.Errorf("work with processes %+v", r.WorkProcs)
	}
	if r.StartP50 <= 0 || r.StartMax < r.StartP99 || r.StartVia != "in-process wake" {
		t.Errorf("start latency p50 %v p99 %v max %v via %q", r.StartP50, r.StartP99, r.StartMax, r.StartVia)
	}
	// The sibling cannot take over before the lease has expired.
	if r.TakeoverS < 1 || r.TakeoverBoundS != 4.5 {
		t.Errorf("takeover %vs, bound %vs", r.TakeoverS, r.TakeoverBoundS)
	}
	if len(r.MemoryMiB) != 10 || r.MemoryPeakMiB < r.MemoryMiB[9] || r.MemoryTasks != 1000 {
		t.Errorf("memory %v peak %v over %d tasks", r.MemoryMiB, r.MemoryPeakMiB, r.MemoryTasks)
	}
	checkAPI(t, cfg, r)
	t.Logf("%+v", r)
}

// TestRunWithoutProcesses runs the steps that need no worker processes.
func TestRunWithoutProcesses(t *testing.T) {
	var steps []string
	r, err := Run(context.Background(), sqliteTargets(t), Config{Tasks: 100, Retries: 10, Procs: 2, Latency: 10}, func(s string) { steps = append(steps, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 5 || r.WorkProcs != nil || r.TakeoverS != 0 || r.APISinglePerSec != 0 {
		t.Errorf("steps %v, result %+v", steps, r)
	}
}
