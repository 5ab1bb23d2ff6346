package gritbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/store"
	_ "github.com/grit-run/grit/store/postgres"
	_ "github.com/grit-run/grit/store/sqlite"
)

// TestMain lets the test binary act as a benchmark worker process, and as
// a child of the isolated workload.
func TestMain(m *testing.M) {
	if engine.IsChild() {
		os.Exit(serveChild())
	}
	if dsn := os.Getenv("GRITBENCH_WORKER_DSN"); dsn != "" {
		os.Exit(serveWorker(dsn, os.Getenv("GRITBENCH_WORKER_CONFIG")))
	}
	os.Exit(m.Run())
}

// testWorker is what spawnTestBinary tells a worker process.
type testWorker struct {
	Concurrency      int
	Lease, Heartbeat time.Duration
}

func serveWorker(dsn, cfgJSON string) int {
	var cfg testWorker
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
	ec := engine.Config{Store: st, Concurrency: cfg.Concurrency, Lease: cfg.Lease, Heartbeat: cfg.Heartbeat}
	if err := Worker(ctx, ec, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// spawnTestBinary starts this test binary as a benchmark worker with
// base's lease and heartbeat.
func spawnTestBinary(base engine.Config) Spawner {
	return func(dsn string, concurrency int) *exec.Cmd {
		b, _ := json.Marshal(testWorker{concurrency, base.Lease, base.Heartbeat})
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "GRITBENCH_WORKER_DSN="+dsn, "GRITBENCH_WORKER_CONFIG="+string(b))
		return cmd
	}
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

// wholeRun is the engines' configuration in the whole benchmark's runs:
// the default lease, 15s, renewed every 5s. On a machine of two cores
// busy with -race builds and other suites, heartbeats were held up for
// as long as 9s: a lease of 2s was lost, with the attempts the figures
// count, and the steps waited on their retries until they gave up.
var wholeRun = engine.Config{}

// wholeRunBound is the takeover's bound in those runs: the lease, a
// heartbeat and 2s.
const wholeRunBound = 22.0

// TestRunMeasuresEverything runs the whole benchmark at a small size, with
// worker processes: every figure comes out, and positive. It asserts no
// speed.
func TestRunMeasuresEverything(t *testing.T) {
	var steps []string
	cfg := Config{
		Tasks: 300, Batch: 100, Retries: 30, Procs: 5, Workers: []int{1, 2}, Latency: 20,
		Engine: wholeRun, Takeover: true, MemoryTasks: 1000,
		APITasks: 300, APICallers: 8, APIBatch: 25, Spawn: spawnTestBinary(wholeRun),
		RemoteWorkers: 2, RemoteClaim: 50,
	}
	r, err := Run(context.Background(), sqliteTargets(t), cfg, func(s string) { steps = append(steps, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 10 {
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
	if r.TakeoverS < 1 || r.TakeoverBoundS != wholeRunBound {
		t.Errorf("takeover %vs, bound %vs", r.TakeoverS, r.TakeoverBoundS)
	}
	if len(r.MemoryMiB) != 10 || r.MemoryPeakMiB < r.MemoryMiB[9] || r.MemoryTasks != 1000 {
		t.Errorf("memory %v peak %v over %d tasks", r.MemoryMiB, r.MemoryPeakMiB, r.MemoryTasks)
	}
	checkAPI(t, cfg, r)
	checkRemote(t, cfg, r)
	t.Logf("%+v", r)
}

// TestRunWithoutProcesses runs the steps that need no worker processes.
func TestRunWithoutProcesses(t *testing.T) {
	var steps []string
	r, err := Run(context.Background(), sqliteTargets(t), Config{Tasks: 100, Retries: 10, Procs: 2, Latency: 10}, func(s string) { steps = append(steps, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 5 || r.WorkProcs != nil || r.TakeoverS != 0 || r.APISinglePerSec != 0 || r.RemoteBatchedPerSec != 0 {
		t.Errorf("steps %v, result %+v", steps, r)
	}
}

// TestEnginesStartFromConfigEngine: the engines the benchmark starts in
// this process have Config.Engine's settings, with their own store,
// concurrency and name.
func TestEnginesStartFromConfigEngine(t *testing.T) {
	t.Parallel()
	base := engine.Config{WorkerID: "shared", Lease: 9 * time.Second, Heartbeat: 2 * time.Second, Version: "v"}
	base.RetryBudget = store.BudgetRates{Ratio: 0.1, Floor: 1, Burst: 2}
	base.PressureBase, base.BudgetWait = 3*time.Second, 250*time.Millisecond
	cfg := Config{Engine: base}
	cfg.defaults()
	got := cfg.engineConfig(nil, 5, nil)
	want := base
	want.Concurrency, want.WorkerID = 5, ""
	got.Logger = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("engine config %+v, want %+v", got, want)
	}
}

// serveChild is the isolated workload's child, as grit's is.
func serveChild() int {
	e, err := engine.NewChild(engine.Config{})
	if err == nil {
		err = RegisterIsolated(e)
	}
	if err == nil {
		err = e.Start(context.Background()) // it does not return
	}
	fmt.Fprintln(os.Stderr, "isolated workload's child:", err)
	return 1
}

// TestIsolatedWork measures isolated no-op attempts against in-process
// ones, with this test binary as the children: both figures come out. It
// asserts no speed.
func TestIsolatedWork(t *testing.T) {
	var steps []string
	cfg := Config{Tasks: 50, Retries: 5, Procs: 2, Latency: 5, Concurrency: 4, Isolated: 200, IsolatedSlots: 4, Child: []string{os.Args[0]}}
	r, err := Run(context.Background(), sqliteTargets(t), cfg, func(s string) { steps = append(steps, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 6 || steps[2] != "isolated handlers" {
		t.Errorf("steps %v", steps)
	}
	if r.IsolatedTasks != 200 || r.IsolatedPerSec <= 0 || r.IsolatedInProcPerSec <= 0 || r.IsolatedAddedUS == 0 || r.IsolatedChildren < 1 || r.IsolatedChildren > 4 {
		t.Errorf("isolated work %+v", r.IsolatedWork)
	}
	t.Logf("%+v", r.IsolatedWork)
}
