package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/internal/herd"
)

func newSimCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "simulations of how retries behave (sim herd)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newSimHerdCmd(e))
	return cmd
}

func newSimHerdCmd(e *env) *cobra.Command {
	var (
		cfg        herd.Config
		strategies []string
		plot       string
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "herd",
		Short: "simulate clients retrying against a downstream that was down: peak load after it returns, time to drain, attempts, dead letters",
		Long: `Simulates --clients clients that each need one call to succeed against a
downstream serving --capacity calls a second, which is down for --down
when they start (their first calls spread over a second). Each strategy
retries with exponential backoff (--min up to --max) under one jitter mode
(none, equal, full, decorrelated): unprotected, with a shared retry budget
and circuit breaker ("+budget+breaker"), or with grit's outage hold
("+hold": once 5 clients failed alike within a minute and none succeeded,
every client waits, using no attempt, while probes go a second later and
then at doubling intervals, until they succeed; then the waiting clients
go at a ramp's rate, slow at first and growing with each success: grit's
own breaker code decides). Reports, per strategy, the peak
load after the downstream returns as a multiple of its capacity, the time
to drain the backlog, the calls made (in all and while down), the clients
grit's poison detection would dead-letter (their second failure alike)
and those the hold held. Deterministic for a --seed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.simHerd(cfg, strategies, plot, asJSON)
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Clients, "clients", 5000, "clients")
	f.Float64Var(&cfg.Capacity, "capacity", 500, "calls a second the downstream serves")
	f.DurationVar(&cfg.Down, "down", herdDefault.Down, "how long the downstream is down")
	f.DurationVar(&cfg.Min, "min", herdDefault.Min, "the backoff's first delay")
	f.DurationVar(&cfg.Max, "max", herdDefault.Max, "the backoff's cap")
	f.Uint64Var(&cfg.Seed, "seed", 1, "random seed")
	f.StringSliceVar(&strategies, "strategies", nil, "strategies to run (default all: none, equal, full, decorrelated, each also with +budget+breaker and with +hold)")
	f.StringVar(&plot, "plot", "", "draw load over time to this .png or .svg file")
	f.BoolVar(&asJSON, "json", false, "print JSON: an array of one object per strategy")
	return cmd
}

var herdDefault = herd.Config{Down: 30e9, Min: 5e8, Max: 30e9}

func (e *env) simHerd(cfg herd.Config, names []string, plot string, asJSON bool) error {
	usage := func(err error) error { return &exitError{code: exitUsage, err: err} }
	if err := cfg.Validate(); err != nil {
		return usage(err)
	}
	if cfg.Clients == 0 || cfg.Capacity == 0 {
		return usage(fmt.Errorf("sim herd: --clients and --capacity must be positive"))
	}
	ss := herd.Strategies()
	if len(names) > 0 {
		ss = nil
		for _, n := range names {
			s, err := herd.ParseStrategy(strings.TrimSpace(n))
			if err != nil {
				return usage(err)
			}
			ss = append(ss, s)
		}
	}
	if plot != "" && !strings.HasSuffix(strings.ToLower(plot), ".png") && !strings.HasSuffix(strings.ToLower(plot), ".svg") {
		return usage(fmt.Errorf("sim herd: --plot %s: want a .png or .svg file", plot))
	}
	var rs []herd.Result
	for _, s := range ss {
		r, err := herd.Run(cfg, s)
		if err != nil {
			return err
		}
		rs = append(rs, r)
	}
	if plot != "" {
		if err := writePlot(plot, rs, cfg); err != nil {
			return err
		}
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(rs)
	}
	fmt.Fprintf(e.stdout, "%-28s %14s %10s %10s %11s %14s %8s\n", "strategy", "peak (x cap)", "drain", "attempts", "while down", "dead-lettered", "held")
	for _, r := range rs {
		drain := fmt.Sprintf("%.1fs", r.DrainS)
		if !r.Drained {
			drain = fmt.Sprintf(">%.0fs (%d left)", r.DrainS, r.Left)
		}
		fmt.Fprintf(e.stdout, "%-28s %14.2f %10s %10d %11d %14d %8d\n", r.Strategy, r.PeakMultiple, drain, r.Attempts, r.DownAttempts, r.DeadLettered, r.Held)
	}
	return nil
}

func writePlot(path string, rs []herd.Result, cfg herd.Config) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("sim herd: --plot: %w", err)
	}
	if err := herd.Plot(f, path, rs, cfg); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
