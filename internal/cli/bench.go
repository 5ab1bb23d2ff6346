package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/internal/gritbench"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
)

func newBenchCmd(e *env) *cobra.Command {
	var (
		cfg     gritbench.Config
		asJSON  bool
		profile string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "measure enqueue and work throughput, retry lateness and process-task overhead",
		Long: `Measures grit on fresh embedded stores in a temporary directory, or with
--store postgres://… on fresh schemas of that database (dropped afterwards):
enqueue throughput, no-op tasks worked end to end (claim, run, complete;
durable commits), how late retries start after they are due (p50/p99), and
a process task's overhead over a bare fork/exec.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if profile != "" {
				stop, err := startProfile(profile)
				if err != nil {
					return err
				}
				defer stop()
			}
			return e.bench(cmd.Context(), cmd.Flags().Changed("store"), cfg, asJSON)
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Tasks, "tasks", 20000, "tasks per throughput measurement")
	f.IntVar(&cfg.Concurrency, "concurrency", 256, "executor slots for the no-op work")
	f.IntVar(&cfg.Retries, "retries", 500, "tasks whose retry lateness is measured")
	f.IntVar(&cfg.Procs, "procs", 200, "process tasks for the overhead")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.StringVar(&profile, "cpuprofile", "", "write a CPU profile of the whole benchmark to this file")
	return cmd
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
	n := 0
	open := func() (store.Store, error) {
		if givenStore && isPostgres(e.storeDSN) {
			n++
			return openBenchSchema(ctx, e.storeDSN, n)
		}
		if givenStore {
			return e.openStore(ctx)
		}
		n++
		dir, err := os.MkdirTemp("", "grit-bench-")
		if err != nil {
			return nil, err
		}
		st, err := store.Open(ctx, "sqlite:"+filepath.Join(dir, fmt.Sprintf("bench%d.db", n)))
		if err != nil {
			return nil, err
		}
		return cleanup{st, dir}, nil
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
	fmt.Fprintf(e.stdout, "machine             %s/%s, %d CPUs, %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(e.stdout, "enqueue             %8.0f tasks/s\n", r.EnqueuePerSec)
	fmt.Fprintf(e.stdout, "work (no-op)        %8.0f tasks/s (%.0f tasks per claim)\n", r.WorkPerSec, r.ClaimBatch)
	fmt.Fprintf(e.stdout, "retry lateness      p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", r.RetryLateP50, r.RetryLateP99, r.RetryLateMax)
	fmt.Fprintf(e.stdout, "process task        %.2f ms (bare fork/exec %.2f ms, overhead %.2f ms)\n", r.ExecTaskMS, r.BareExecMS, r.ExecOverhead)
	return nil
}

// openBenchSchema opens a fresh schema of its own on a PostgreSQL store for
// one measurement, dropped when the store is closed.
func openBenchSchema(ctx context.Context, dsn string, n int) (store.Store, error) {
	schema := fmt.Sprintf("grit_bench_%d_%d", os.Getpid(), n)
	st, err := postgres.OpenConfig(ctx, postgres.Config{DSN: dsn, Schema: schema})
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	return dropOnClose{st}, nil
}

// dropOnClose drops a benchmark's schema when its store is closed.
type dropOnClose struct{ *postgres.Store }

func (d dropOnClose) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := d.Pool().Exec(ctx, "DROP SCHEMA "+d.Schema()+" CASCADE")
	return errors.Join(err, d.Store.Close())
}

// cleanup removes a temporary store's directory when it is closed.
type cleanup struct {
	store.Store
	dir string
}

func (c cleanup) Close() error {
	err := c.Store.Close()
	os.RemoveAll(c.dir)
	return err
}

func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}
