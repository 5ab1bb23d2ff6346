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

// newWeightCmd is grit limits weight: tenants' weights in fair claims,
// beside their limits.
func newWeightCmd(e *env, asJSON *bool) *cobra.Command {
	return &cobra.Command{
		Use:   "weight [TENANT WEIGHT]",
		Short: "list tenants' weights in fair claims, or set one (1, the default, removes it)",
		Long: `Among due tasks of one priority, workers take tenants in turn; a tenant
of weight 3 takes three tasks to a tenant of weight 1's one. With no
arguments, lists the weights set; with a tenant and a weight (1 to 1000),
sets it. "" is the tasks without a tenant.`,
		Example: "  grit limits weight acme 3",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 0 && len(args) != 2 {
				return fmt.Errorf("limits weight: want no arguments (list) or a tenant and a weight (e.g. grit limits weight acme 3), got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return e.weightsList(cmd.Context(), *asJSON)
			}
			w, err := parseWeight(args)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			return e.weightSet(cmd.Context(), args[0], w, *asJSON)
		},
	}
}

// parseWeight reads grit limits weight's arguments.
func parseWeight(args []string) (int, error) {
	w, err := strconv.Atoi(args[1])
	if err != nil {
		return 0, fmt.Errorf("limits weight %s: %q: want a whole number from 1 to %d (%d is the default)", args[0], args[1], store.MaxWeight, store.DefaultWeight)
	}
	return w, store.ValidateWeight(args[0], w)
}

func (e *env) weigher(ctx context.Context) (store.Weigher, func(), error) {
	st, done, err := e.limiter(ctx)
	if err != nil {
		return nil, nil, err
	}
	w, ok := st.(store.Weigher)
	if !ok {
		done()
		return nil, nil, fmt.Errorf("limits weight: the store %s keeps no weights: every tenant has weight %d", shownDSN(e.storeDSN), store.DefaultWeight)
	}
	return w, done, nil
}

func (e *env) weightsList(ctx context.Context, asJSON bool) error {
	w, done, err := e.weigher(ctx)
	if err != nil {
		return err
	}
	defer done()
	ws, err := w.Weights(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(ws)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TENANT\tWEIGHT")
	for _, t := range slices.Sorted(maps.Keys(ws)) {
		fmt.Fprintf(tw, "%q\t%d\n", t, ws[t])
	}
	return tw.Flush()
}

func (e *env) weightSet(ctx context.Context, tenant string, weight int, asJSON bool) error {
	w, done, err := e.weigher(ctx)
	if err != nil {
		return err
	}
	defer done()
	if err := w.SetWeight(ctx, tenant, weight); err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(map[string]int{tenant: weight})
	}
	fmt.Fprintf(e.stdout, "tenant %q: weight %d\n", tenant, weight)
	return nil
}
