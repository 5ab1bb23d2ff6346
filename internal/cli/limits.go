package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/store"
)

func newLimitsCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "limits",
		Short: "list the limits of running attempts per queue, tenant and group, or set one",
		Long: `Lists the limits of running attempts across the fleet, per queue, per
tenant and per group, with how many attempts of each run now. Workers read
them at every heartbeat; a task past a limit waits, using no attempt.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return e.limitsList(cmd.Context(), asJSON) },
	}
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print JSON: the limits, or the one set")
	set := &cobra.Command{
		Use:   "set queue|tenant|group NAME MAX",
		Short: "set the most attempts of a queue, tenant or group running at once across the fleet (0 removes the limit)",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := parseLimit(args)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			return e.limitSet(cmd.Context(), l, asJSON)
		},
	}
	cmd.AddCommand(set, newWeightCmd(e, &asJSON))
	return cmd
}

// parseLimit reads grit limits set's arguments.
func parseLimit(args []string) (store.Limit, error) {
	l := store.Limit{Scope: store.Scope(args[0]), Name: args[1]}
	if l.Scope != store.ScopeQueue && l.Scope != store.ScopeTenant && l.Scope != store.ScopeGroup {
		return l, fmt.Errorf("limits set: %q: want queue, tenant or group (e.g. grit limits set tenant acme 5)", args[0])
	}
	n, err := strconv.Atoi(args[2])
	if err != nil || n < 0 {
		return l, fmt.Errorf("limits set %s %s: %q: want a whole number of running attempts, or 0 to remove the limit", args[0], args[1], args[2])
	}
	l.Max = n
	if l.Scope == store.ScopeGroup {
		return l, store.ValidateGroup(l.Name)
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
	rows, err := l.Limits(ctx)
	if err != nil {
		return err
	}
	gs, err := l.Groups(ctx)
	if err != nil {
		return err
	}
	var names []string
	for _, g := range slices.Sorted(maps.Keys(gs)) {
		if gs[g].Limit > 0 {
			names = append(names, g)
		}
	}
	run, err := l.Running(ctx, store.ScopeGroup, names)
	if err != nil {
		return err
	}
	for _, g := range names {
		rows = append(rows, store.Limit{Scope: store.ScopeGroup, Name: g, Max: gs[g].Limit, Running: len(run[g])})
	}
	if rows == nil {
		rows = []store.Limit{}
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(rows)
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SCOPE\tNAME\tRUNNING\tLIMIT")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\n", r.Scope, r.Name, r.Running, r.Max)
	}
	return w.Flush()
}

func (e *env) limitSet(ctx context.Context, lim store.Limit, asJSON bool) error {
	l, done, err := e.limiter(ctx)
	if err != nil {
		return err
	}
	defer done()
	if lim.Scope == store.ScopeGroup {
		if _, err := l.UpdateGroup(ctx, lim.Name, func(g *store.Group) { g.Limit = lim.Max }); err != nil {
			return err
		}
	} else if err := l.SetLimit(ctx, lim); err != nil {
		return err
	}
	if asJSON {
		run, err := l.Running(ctx, lim.Scope, []string{lim.Name})
		if err != nil {
			return err
		}
		lim.Running = len(run[lim.Name])
		return json.NewEncoder(e.stdout).Encode(lim)
	}
	if lim.Max == 0 {
		fmt.Fprintf(e.stdout, "%s %s: no limit\n", lim.Scope, lim.Name)
	} else {
		fmt.Fprintf(e.stdout, "%s %s: at most %d running\n", lim.Scope, lim.Name, lim.Max)
	}
	return nil
}
