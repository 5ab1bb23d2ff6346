package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/internal/chaos"
)

func newChaosCmd(e *env) *cobra.Command {
	var cfg chaos.Config
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "chaos",
		Short: "run a fleet on PostgreSQL under load while injecting faults at random; check that nothing was lost or run twice",
		Long: `Starts --workers grit workers on the --store (PostgreSQL), enqueues --rate
short process tasks a second for --for, and meanwhile injects a fault
about every --every, chosen from --seed: SIGKILL of a worker (restarted at
once), SIGSTOP of a worker past its lease then SIGCONT, and, with
--pg-data, a restart of that PostgreSQL cluster (pg_ctl, run as its
owner). Then it waits for every task to be final and checks, from the
store and from the ledger the tasks write: no acknowledged task lost, none
with two successes, every one final, and every attempt that did not
succeed interrupted by a fault. It prints a summary with the takeover
times and exits 1 if an invariant was violated (docs/reliability.md).
The same --seed injects the same faults in the same order.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.chaos(cmd.Context(), cfg, asJSON)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&cfg.For, "for", time.Minute, "how long the load and the faults last")
	f.Uint64Var(&cfg.Seed, "seed", 1, "the seed the faults, their workers and their lengths are drawn from")
	f.IntVar(&cfg.Workers, "workers", chaos.DefaultWorkers, "worker processes in the fleet")
	f.IntVar(&cfg.Rate, "rate", chaos.DefaultRate, "tasks enqueued a second")
	f.DurationVar(&cfg.Every, "every", chaos.DefaultEvery, "mean time between faults")
	f.DurationVar(&cfg.Lease, "lease", chaos.DefaultLease, "the workers' lease")
	f.DurationVar(&cfg.Settle, "settle", chaos.DefaultSettle, "how long, after the faults, every task may take to be final")
	f.StringVar(&cfg.PGData, "pg-data", "", "data directory of a PostgreSQL cluster (the --store's) that the run may restart")
	f.StringVar(&cfg.PGCtl, "pg-ctl", "pg_ctl", "the pg_ctl that restarts it")
	f.StringVar(&cfg.Dir, "dir", "", "where the ledger and the workers' logs go (default: a new temporary directory, kept)")
	f.BoolVar(&asJSON, "json", false, `print JSON: {"seed", "took_ms", "acked", "not_acked", "faults": {KIND: N}, "attempts", "interrupted", "reruns", "takeovers_ms": [...], "settled", "violations": [...], "passed"}`)
	return cmd
}

func (e *env) chaos(ctx context.Context, cfg chaos.Config, asJSON bool) error {
	if !strings.HasPrefix(e.storeDSN, "postgres://") && !strings.HasPrefix(e.storeDSN, "postgresql://") {
		return &exitError{code: exitUsage, err: fmt.Errorf("grit chaos: --store %q: want a PostgreSQL DSN (postgres://…): the fleet shares it", shownDSN(e.storeDSN))}
	}
	ctx, stop := untilStopped(ctx)
	defer stop()
	st, err := e.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if cfg.Dir == "" {
		if cfg.Dir, err = os.MkdirTemp("", "grit-chaos-"); err != nil {
			return err
		}
	}
	cfg.Dir, _ = filepath.Abs(cfg.Dir)
	cfg.Store, cfg.DSN, cfg.Exe, cfg.Out = st, e.storeDSN, exe, e.stderr
	fmt.Fprintf(e.stderr, "chaos: seed %d for %v; ledger and workers' logs in %s\n", cfg.Seed, cfg.For, cfg.Dir)
	rep, err := chaos.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if asJSON {
		if err := json.NewEncoder(e.stdout).Encode(chaosView(rep)); err != nil {
			return err
		}
	} else {
		rep.Print(e.stdout)
	}
	if !rep.Passed() {
		return &exitError{code: exitFailed, err: fmt.Errorf("grit chaos: %d invariants violated (seed %d)", len(rep.Violations), cfg.Seed)}
	}
	return nil
}

// chaosJSON is what grit chaos --json prints: the report, durations in
// milliseconds as every command prints them.
type chaosJSON struct {
	Seed        uint64         `json:"seed"`
	TookMS      int64          `json:"took_ms"`
	Acked       int            `json:"acked"`
	NotAcked    int            `json:"not_acked"`
	Faults      map[string]int `json:"faults"`
	Attempts    int            `json:"attempts"`
	Interrupted int            `json:"interrupted"`
	Reruns      int            `json:"reruns"`
	TakeoversMS []int64        `json:"takeovers_ms"`
	Settled     bool           `json:"settled"`
	Violations  []string       `json:"violations"`
	Passed      bool           `json:"passed"`
}

func chaosView(r *chaos.Report) chaosJSON {
	out := chaosJSON{Seed: r.Seed, TookMS: r.Took.Milliseconds(), Acked: r.Acked, NotAcked: r.NotAcked, Faults: r.Faults,
		Attempts: r.Attempts, Interrupted: r.Interrupted, Reruns: r.Reruns, TakeoversMS: []int64{}, Settled: r.Settled,
		Violations: r.Violations, Passed: r.Passed()}
	for _, d := range r.Takeovers {
		out.TakeoversMS = append(out.TakeoversMS, d.Milliseconds())
	}
	if out.Faults == nil {
		out.Faults = map[string]int{}
	}
	if out.Violations == nil {
		out.Violations = []string{}
	}
	return out
}
