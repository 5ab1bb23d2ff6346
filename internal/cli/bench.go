package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/internal/gritbench"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/store/sqlite"
)

func newBenchCmd(e *env) *cobra.Command {
	var (
		cfg     gritbench.Config
		asJSON  bool
		profile string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "measure throughput, start latency, retry lateness, takeover, memory and process-task overhead",
		Long: `Measures grit on fresh embedded stores in a temporary directory, or with
--store postgres://… on fresh schemas of that database (dropped afterwards):
enqueue throughput, directly and through the gRPC API of a server in this
process (one Enqueue call per task, and Send in batches, from --api-callers
concurrent callers over loopback); no-op tasks worked end to end (claim,
run, complete; durable commits) by an engine in this process, by
--remote-workers remote workers through that API (a Report call per claim,
and a Complete call per task) and by 1 and 4 worker processes; what
isolating a handler in warm child processes adds to a no-op attempt
(--isolated tasks each way, at --isolated-concurrency slots); how long after its
enqueue a task starts on an idle worker (p50/p99); how late retries start
after they are due (p50/p99); how long a sibling takes to run again the
tasks of a worker killed with SIGKILL; with --memory-tasks, a worker's
resident memory as it works that many tasks; and a process task's
overhead over a bare fork/exec. See docs/bench.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return e.runBench(cmd, cfg, asJSON, profile) },
	}
	f := cmd.Flags()
	addBenchFlags(f, &cfg)
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.StringVar(&profile, "cpuprofile", "", "write a CPU profile of the whole benchmark to this file")
	registerKnobs(f, benchKnobs)
	return cmd
}

// runBench measures what cfg asks for, with engines configured by the
// settings (grit bench's knobs: its flags and GRIT_* variables).
func (e *env) runBench(cmd *cobra.Command, cfg gritbench.Config, asJSON bool, profile string) error {
	set, err := e.settings(cmd.Flags())
	if err != nil {
		return err
	}
	if profile != "" {
		stop, err := startProfile(profile)
		if err != nil {
			return err
		}
		defer stop()
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("bench: find this program to start worker processes: %w", err)
	}
	// Ctrl-C or SIGTERM ends the measurement, not the process: the
	// schemas and files it made are removed on the way out.
	ctx, stop := untilStopped(cmd.Context())
	defer stop()
	bc := benchConfig(cfg, set, self)
	if e.notifyDSN != "" { // its worker processes listen where it does
		bc.Spawn = benchWorkerSpawner(self, append(set.args(), "--notify-store", e.notifyDSN))
	}
	return e.bench(ctx, cmd.Flags().Changed("store"), bc, asJSON)
}

// addBenchFlags adds the flags of what grit bench measures and how much.
func addBenchFlags(f *pflag.FlagSet, cfg *gritbench.Config) {
	f.IntVar(&cfg.Tasks, "tasks", 20000, "tasks per throughput measurement")
	f.IntVar(&cfg.Concurrency, "concurrency", 256, "executor slots per engine for the no-op work")
	f.IntSliceVar(&cfg.Workers, "workers", []int{1, 4}, "worker process counts whose throughput is measured")
	f.IntVar(&cfg.Latency, "latency", 1000, "tasks whose enqueue-to-start latency is measured, enqueued 5ms apart")
	f.IntVar(&cfg.Retries, "retries", 500, "tasks whose retry lateness is measured")
	f.BoolVar(&cfg.Takeover, "takeover", true, "measure the takeover after SIGKILL (takes about a lease)")
	f.IntVar(&cfg.MemoryTasks, "memory-tasks", 0, "tasks one worker process works while its memory is sampled (0: skip)")
	f.IntVar(&cfg.Procs, "procs", 200, "process tasks for the overhead")
	f.IntVar(&cfg.APITasks, "api-tasks", 5000, "tasks enqueued through the gRPC API, one call each and then batched (0: skip)")
	f.IntVar(&cfg.APICallers, "api-callers", 32, "concurrent callers of the gRPC API")
	f.IntVar(&cfg.APIBatch, "api-batch", 50, "tasks per EnqueueBatch call of the batched API enqueue (the client's max batch size)")
	f.IntVar(&cfg.RemoteWorkers, "remote-workers", 4, "remote workers working --tasks no-op tasks through the gRPC API, reporting in batches and one call per task (0: skip)")
	f.IntVar(&cfg.RemoteClaim, "remote-claim", 100, "tasks per claim of a remote worker")
	f.IntVar(&cfg.Isolated, "isolated", 3000, "no-op tasks worked by a handler isolated in child processes, and as many in process, at --isolated-concurrency (0: skip)")
	f.IntVar(&cfg.IsolatedSlots, "isolated-concurrency", 16, "executor slots, and so warm children, of the isolated workload")
}

// benchConfig is grit bench's configuration with its engines': those of
// the settings, as grit worker's, in this process and in the worker
// processes it starts (self bench-worker), which get the settings as
// flags.
func benchConfig(cfg gritbench.Config, s settings, self string) gritbench.Config {
	cfg.Engine = s.engineConfig(nil)
	cfg.Spawn = benchWorkerSpawner(self, s.args())
	cfg.Child = []string{self, benchChildCmd}
	return cfg
}

// benchChildCmd is the command of the children of grit bench's isolated
// workload (newBenchChildCmd): they must not run the whole bench again,
// as the default command, this program with its arguments, would.
const benchChildCmd = "bench-isolated-child"

// newBenchChildCmd is a child of grit bench's isolated workload: started
// by the benchmark's engine (engine.ChildEnv), it serves the no-op
// handler the workload isolates.
func newBenchChildCmd() *cobra.Command {
	return &cobra.Command{
		Use:    benchChildCmd,
		Short:  "a child process of grit bench's isolated handlers",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !engine.IsChild() {
				return usageErr("%s is the child process grit bench starts to measure isolated handlers; it is not run by hand (run grit bench --isolated N)", benchChildCmd)
			}
			e, err := engine.NewChild(engine.Config{})
			if err != nil {
				return err
			}
			if err := gritbench.RegisterIsolated(e); err != nil {
				return err
			}
			return e.Start(cmd.Context()) // serves grit bench; it does not return
		},
	}
}

// benchWorkerSpawner starts self as a benchmark worker, with knobArgs,
// the flags that give it grit bench's settings.
func benchWorkerSpawner(self string, knobArgs []string) gritbench.Spawner {
	return func(dsn string, concurrency int) *exec.Cmd {
		args := append([]string{"bench-worker", "--store", dsn, "--concurrency", strconv.Itoa(concurrency)}, knobArgs...)
		return exec.Command(self, args...)
	}
}

// newBenchWorkerCmd is the worker process grit bench starts; it speaks
// gritbench.Worker's protocol on its standard input and output.
func newBenchWorkerCmd(e *env) *cobra.Command {
	var concurrency int
	cmd := &cobra.Command{
		Use:    "bench-worker",
		Short:  "a worker process of grit bench",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := e.settings(cmd.Flags())
			if err != nil {
				return err
			}
			st, err := e.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			return gritbench.Worker(cmd.Context(), benchWorkerConfig(st, s, concurrency), cmd.InOrStdin(), e.stdout)
		},
	}
	cmd.Flags().IntVar(&concurrency, "concurrency", 256, "executor slots")
	registerKnobs(cmd.Flags(), benchKnobs)
	return cmd
}

// benchWorkerConfig is a benchmark worker process's engine configuration:
// the settings grit bench passed on, over st.
func benchWorkerConfig(st store.Store, s settings, concurrency int) engine.Config {
	cfg := s.engineConfig(st)
	cfg.Concurrency = concurrency
	return cfg
}

func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func (e *env) bench(ctx context.Context, givenStore bool, cfg gritbench.Config, asJSON bool) error {
	if err := checkBenchConfig(cfg); err != nil {
		return err
	}
	n := 0
	dir := ""
	defer func() {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}()
	open := func() (gritbench.Target, error) {
		n++
		if givenStore && isPostgres(e.storeDSN) {
			return openBenchSchema(ctx, e.storeDSN, e.notifyDSN, n)
		}
		// On SQLite every step has a fresh file of its own, in a
		// directory removed at the end: beside the given file (on its
		// disk), else in the system's temporary directory. One file for
		// every step would count each step's tasks in the next.
		if dir == "" {
			parent := ""
			if givenStore {
				path, err := sqlite.ParseDSN(e.storeDSN)
				if err != nil {
					return gritbench.Target{}, err
				}
				parent = filepath.Dir(path)
			}
			var err error
			if dir, err = os.MkdirTemp(parent, "grit-bench-"); err != nil {
				return gritbench.Target{}, err
			}
		}
		dsn := "sqlite:" + filepath.Join(dir, fmt.Sprintf("bench%d.db", n))
		st, err := store.Open(ctx, dsn)
		return gritbench.Target{Store: st, DSN: dsn}, err
	}
	progress := func(step string) {
		if !asJSON {
			fmt.Fprintf(e.stderr, "measuring %s…\n", step)
		}
	}
	r, err := gritbench.Run(ctx, open, cfg, progress)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(r)
	}
	printBench(e.stdout, r)
	return nil
}

// checkBenchConfig rejects sizes that cannot be measured.
func checkBenchConfig(cfg gritbench.Config) error {
	bad := func(flag string, v any, want string) error {
		return &exitError{code: exitUsage, err: fmt.Errorf("bench: --%s %v: want %s", flag, v, want)}
	}
	for flag, v := range map[string]int{"tasks": cfg.Tasks, "concurrency": cfg.Concurrency, "latency": cfg.Latency, "retries": cfg.Retries, "procs": cfg.Procs, "api-callers": cfg.APICallers} {
		if v <= 0 {
			return bad(flag, v, "a positive number")
		}
	}
	for _, w := range cfg.Workers {
		if w <= 0 || w > 64 {
			return bad("workers", cfg.Workers, "counts from 1 to 64, e.g. --workers 1,4")
		}
	}
	if cfg.APITasks < 0 {
		return bad("api-tasks", cfg.APITasks, "0 (skip) or a positive number")
	}
	if cfg.APIBatch <= 0 || cfg.APIBatch > server.DefaultMaxBatch {
		return bad("api-batch", cfg.APIBatch, fmt.Sprintf("1 to %d, the server's limit", server.DefaultMaxBatch))
	}
	if cfg.RemoteWorkers < 0 || cfg.RemoteWorkers > 64 {
		return bad("remote-workers", cfg.RemoteWorkers, "0 (skip) to 64")
	}
	if cfg.RemoteClaim <= 0 || cfg.RemoteClaim > server.DefaultMaxBatch {
		return bad("remote-claim", cfg.RemoteClaim, fmt.Sprintf("1 to %d, the server's limit", server.DefaultMaxBatch))
	}
	if cfg.Isolated < 0 {
		return bad("isolated", cfg.Isolated, "0 (skip) or a positive number")
	}
	if cfg.IsolatedSlots <= 0 || cfg.IsolatedSlots > 1024 {
		return bad("isolated-concurrency", cfg.IsolatedSlots, "1 to 1024")
	}
	if cfg.MemoryTasks < 0 {
		return bad("memory-tasks", cfg.MemoryTasks, "0 (skip) or a positive number")
	}
	return nil
}

func printBench(w io.Writer, r gritbench.Result) {
	fmt.Fprintf(w, "machine             %s/%s, %d CPUs, %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(w, "enqueue             %8.0f tasks/s\n", r.EnqueuePerSec)
	if a := r.APIEnqueue; a.APITasks > 0 {
		fmt.Fprintf(w, "enqueue via API     %8.0f tasks/s, one call per task (%d tasks, %d callers, loopback gRPC)\n", a.APISinglePerSec, a.APITasks, a.APICallers)
		fmt.Fprintf(w, "                    %8.0f tasks/s batched (max %d, %.1f per call): %.1f× single, %.2f× direct enqueue\n",
			a.APIBatchedPerSec, a.APIBatch, a.APIBatchMean, a.APIBatchedVsSingle, a.APIBatchedVsDirect)
	}
	fmt.Fprintf(w, "work (no-op)        %8.0f tasks/s in this process (%.0f tasks per claim)\n", r.WorkPerSec, r.ClaimBatch)
	if rw := r.RemoteWork; rw.RemoteWorkers > 0 {
		fmt.Fprintf(w, "work via API        %8.0f tasks/s, %d remote workers, one Report per claim (%.0f tasks each): %.2f× in this process\n",
			rw.RemoteBatchedPerSec, rw.RemoteWorkers, rw.RemoteClaimMean, rw.RemoteBatchedVsGo)
		fmt.Fprintf(w, "                    %8.0f tasks/s with one Complete call per task: %.2f× in this process; batched %.1f× single\n",
			rw.RemoteSinglePerSec, rw.RemoteSingleVsGo, rw.RemoteBatchedVsSingle)
	}
	for _, p := range r.WorkProcs {
		fmt.Fprintf(w, "                    %8.0f tasks/s with %d worker processes (peak RSS %.0f MiB each)\n", p.PerSec, p.Workers, p.PeakMiB)
	}
	if iw := r.IsolatedWork; iw.IsolatedTasks > 0 {
		fmt.Fprintf(w, "isolated handlers   %8.0f tasks/s, %+.0f µs a no-op attempt over in-process (%.0f tasks/s; %d tasks each, %d warm children)\n",
			iw.IsolatedPerSec, iw.IsolatedAddedUS, iw.IsolatedInProcPerSec, iw.IsolatedTasks, iw.IsolatedChildren)
	}
	fmt.Fprintf(w, "enqueue to start    p50 %.2f ms, p99 %.2f ms, max %.2f ms (%s)\n", r.StartP50, r.StartP99, r.StartMax, r.StartVia)
	fmt.Fprintf(w, "retry lateness      p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", r.RetryLateP50, r.RetryLateP99, r.RetryLateMax)
	if r.TakeoverS > 0 {
		fmt.Fprintf(w, "takeover (SIGKILL)  %.2f s (bound: lease + heartbeat + 2s = %.0f s)\n", r.TakeoverS, r.TakeoverBoundS)
	}
	if r.MemoryTasks > 0 {
		fmt.Fprintf(w, "worker memory       %d tasks at %.0f tasks/s: RSS %.1f MiB after 10%%, %.1f MiB at the end, peak %.1f MiB\n",
			r.MemoryTasks, r.MemoryPerSec, r.MemoryMiB[0], r.MemoryMiB[len(r.MemoryMiB)-1], r.MemoryPeakMiB)
	}
	fmt.Fprintf(w, "process task        %.2f ms (bare fork/exec %.2f ms, overhead %.2f ms)\n", r.ExecTaskMS, r.BareExecMS, r.ExecOverhead)
}

// openBenchSchema opens a fresh schema of its own on a PostgreSQL store for
// one measurement, dropped when the store is closed.
func openBenchSchema(ctx context.Context, dsn, notify string, n int) (gritbench.Target, error) {
	schema := fmt.Sprintf("grit_bench_%d_%d", os.Getpid(), n)
	st, err := postgres.OpenConfig(ctx, postgres.Config{DSN: dsn, Schema: schema, NotifyDSN: notify})
	if err != nil {
		// An open cut short (Ctrl-C) may have made the schema already.
		return gritbench.Target{}, &exitError{code: exitUsage, err: errors.Join(err, dropSchema(dsn, schema))}
	}
	u, err := url.Parse(dsn)
	if err != nil {
		st.Close()
		return gritbench.Target{}, &exitError{code: exitUsage, err: err}
	}
	q := u.Query()
	q.Set("schema", schema)
	u.RawQuery = q.Encode()
	return gritbench.Target{Store: dropOnClose{st, dsn, schema}, DSN: u.String()}, nil
}

// dropSchema drops a benchmark's schema, if it was made, on a connection
// of its own. A statement of the measurement cut short by Ctrl-C may still
// hold its locks for a moment, and DROP … CASCADE can then lose a deadlock
// to it, so a failed drop is tried again until a minute has passed; what
// still fails is said, with the statement that finishes the job.
func dropSchema(dsn, schema string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if u, err := url.Parse(dsn); err == nil {
		q := u.Query()
		q.Del("schema") // grit's parameter, not the server's
		u.RawQuery = q.Encode()
		dsn = u.String()
	}
	drop := "DROP SCHEMA IF EXISTS " + pgx.Identifier{schema}.Sanitize() + " CASCADE"
	var err error
	for {
		var conn *pgx.Conn
		if conn, err = pgx.Connect(ctx, dsn); err == nil {
			_, err = conn.Exec(ctx, drop)
			conn.Close(context.Background())
			if err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("benchmark schema %s left behind (%w); remove it with: %s", schema, err, drop)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// dropOnClose drops a benchmark's schema when its store is closed: the
// store's connections first, so none of them holds a lock the drop waits
// for.
type dropOnClose struct {
	*postgres.Store
	dsn, schema string
}

func (d dropOnClose) Close() error {
	return errors.Join(d.Store.Close(), dropSchema(d.dsn, d.schema))
}

func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}
