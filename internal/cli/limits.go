package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/internal/ops"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/taskfile"
)

func newLimitsCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "limits",
		Short: "list the limits of running attempts and the rates per queue, kind, group and tenant, or set one",
		Long: `Lists the limits across the fleet: of running attempts per queue, tenant
and group, with how many attempts of each run now; and of calls a second
(rates) per queue, kind, group and tenant, with about how many tasks each
holds back now. Workers read them at every heartbeat; a task past a limit
or a rate waits, using no attempt.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return e.limitsList(cmd.Context(), asJSON) },
	}
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print JSON: the limits, or the one set")
	var rateArg, burstArg, weightArg string
	set := &cobra.Command{
		Use:   "set queue|kind|group|tenant NAME [MAX] [--rate N/s] [--burst N] [--weight W]",
		Short: "set the most attempts running at once (MAX; 0 removes it), the most calls a second (--rate; 0 removes it) or a tenant's weight (--weight), across the fleet",
		Long: `Sets a limit across the fleet. MAX is the most attempts of a queue, tenant
or group running at once (0 removes the limit). --rate is the most calls a
second, minute or hour that a queue, kind, group or tenant starts (5/s,
300/m, 100/h; 0 removes it), with --burst calls at once (a second's worth,
at least 1, when not set): workers take its tokens for a whole claim at
once, and a task past it waits its turn, using no attempt.

  grit limits set tenant acme 5
  grit limits set tenant acme --rate 5/s --burst 10
  grit limits set kind resize --rate 300/m
  grit limits set tenant acme --rate 0`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			var rateP, burstP, weightP *string
			if cmd.Flags().Changed("rate") {
				rateP = &rateArg
			}
			if cmd.Flags().Changed("burst") {
				burstP = &burstArg
			}
			if cmd.Flags().Changed("weight") {
				weightP = &weightArg
			}
			ch, err := parseLimitSet(args, rateP, burstP, weightP)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			return e.limitSet(cmd.Context(), ch, asJSON)
		},
	}
	set.Flags().StringVar(&rateArg, "rate", "", "the most calls a second, minute or hour: N/s, N/m or N/h (e.g. 5/s); 0 removes the rate")
	set.Flags().StringVar(&burstArg, "burst", "", "the most calls at once under --rate (default a second's worth, at least 1)")
	set.Flags().StringVar(&weightArg, "weight", "", "a tenant's weight in fair claims, 1 to 1000 (1, the default, removes it)")
	cmd.AddCommand(set, newWeightCmd(e, &asJSON))
	return cmd
}

// parseLimitSet reads grit limits set's arguments and its --rate,
// --burst and --weight (nil when not given).
func parseLimitSet(args []string, rateArg, burstArg, weightArg *string) (ops.LimitChange, error) {
	var ch ops.LimitChange
	scope, name := store.Scope(args[0]), args[1]
	where := fmt.Sprintf("limits set %s %s", args[0], args[1])
	switch scope {
	case store.ScopeQueue, store.ScopeTenant, store.ScopeGroup, store.ScopeKind:
	default:
		return ch, fmt.Errorf("limits set: %q: want queue, kind, group or tenant (e.g. grit limits set tenant acme 5, or --rate 5/s)", args[0])
	}
	if len(args) == 3 {
		l, err := parseMax(where, scope, name, args[2])
		if err != nil {
			return ch, err
		}
		ch.Limit = &l
	}
	if burstArg != nil && rateArg == nil {
		return ch, fmt.Errorf("%s: --burst %s goes with --rate (e.g. --rate 5/s --burst 10)", where, *burstArg)
	}
	if len(args) == 2 && rateArg == nil && weightArg == nil {
		return ch, fmt.Errorf("%s: give MAX running attempts, or --rate (e.g. grit limits set %s %s 5, or --rate 5/s)", where, args[0], args[1])
	}
	if weightArg != nil {
		if scope != store.ScopeTenant {
			return ch, fmt.Errorf("%s: --weight is a tenant's, in fair claims (e.g. grit limits set tenant acme --weight 3)", where)
		}
		w, err := ops.ParseWeight(name, *weightArg)
		if err != nil {
			return ch, fmt.Errorf("%s: --%w", where, err)
		}
		ch.Weight = &w
	}
	if rateArg != nil {
		r, err := ops.ParseRate(store.RateKey{Scope: scope, Name: name}, *rateArg, burstArg)
		if err != nil {
			return ch, fmt.Errorf("%s: --%w", where, err)
		}
		ch.Rate = &r
	}
	return ch, nil
}

// parseMax reads the MAX of grit limits set.
func parseMax(where string, scope store.Scope, name, arg string) (store.Limit, error) {
	l := store.Limit{Scope: scope, Name: name}
	if scope == store.ScopeKind {
		return l, fmt.Errorf("%s %s: a kind has no limit of running attempts, only a rate (e.g. --rate 5/s)", where, arg)
	}
	n, err := strconv.Atoi(arg)
	if err != nil || n < 0 {
		return l, fmt.Errorf("%s: %q: want a whole number of running attempts, or 0 to remove the limit", where, arg)
	}
	l.Max = n
	if scope == store.ScopeGroup {
		return l, store.ValidateGroup(name)
	}
	return l, store.ValidateLimit(l)
}

func (e *env) limiter(ctx context.Context) (store.Store, func(), error) {
	st, err := e.openExisting(ctx)
	if err != nil {
		return nil, nil, err
	}
	return st, func() { st.Close() }, nil
}

func (e *env) limitsList(ctx context.Context, asJSON bool) error {
	l, done, err := e.limiter(ctx)
	if err != nil {
		return err
	}
	defer done()
	rows, err := ops.Limits(ctx, l)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(rows)
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SCOPE\tNAME\tRUNNING\tLIMIT\tRATE\tWAITING\tWEIGHT")
	for _, r := range rows {
		running, max, rt, waiting, weight := "-", "-", "-", "-", "-"
		if r.Max > 0 {
			running, max = strconv.Itoa(r.Running), strconv.Itoa(r.Max)
		}
		if r.Rate != nil {
			rt, waiting = r.Rate.String(), strconv.Itoa(r.Waiting)
		}
		if r.Weight > 0 {
			weight = strconv.Itoa(r.Weight)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Scope, r.Name, running, max, rt, waiting, weight)
	}
	return w.Flush()
}

func (e *env) limitSet(ctx context.Context, ch ops.LimitChange, asJSON bool) error {
	l, done, err := e.limiter(ctx)
	if err != nil {
		return err
	}
	defer done()
	if err := ops.SetLimits(ctx, l, ch); err != nil {
		return err
	}
	if lim := ch.Limit; lim != nil && asJSON {
		run, err := l.Running(ctx, lim.Scope, []string{lim.Name})
		if err != nil {
			return err
		}
		lim.Running = len(run[lim.Name])
	}
	if asJSON {
		if ch.Rate == nil {
			return json.NewEncoder(e.stdout).Encode(ch.Limit) // as before rates: the limit alone
		}
		return json.NewEncoder(e.stdout).Encode(ch)
	}
	e.printLimitChange(ch)
	return nil
}

func (e *env) printLimitChange(ch ops.LimitChange) {
	for _, line := range ch.Says() {
		fmt.Fprintln(e.stdout, line)
	}
}

// setFileLimits sets a task file's limits in st, as grit limits set does
// (a limit the file does not set, of running attempts or of calls a
// second, is left as it is).
func setFileLimits(ctx context.Context, st store.Store, ls []taskfile.Limit) error {
	for _, fl := range ls {
		var ch ops.LimitChange
		scope := store.Scope(fl.Scope)
		if fl.Max > 0 {
			ch.Limit = &store.Limit{Scope: scope, Name: fl.Name, Max: fl.Max}
		}
		if fl.Rate.Rate > 0 {
			ch.Rate = &store.Rate{RateKey: store.RateKey{Scope: scope, Name: fl.Name}, Limit: fl.Rate}
		}
		if err := ops.SetLimits(ctx, st, ch); err != nil {
			return fmt.Errorf("limits of the task file, line %d: %w", fl.Line, err)
		}
	}
	return nil
}
