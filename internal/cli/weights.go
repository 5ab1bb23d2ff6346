package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/internal/ops"
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
			w, err := ops.ParseWeight(args[0], args[1])
			if err != nil {
				return &exitError{code: exitUsage, err: fmt.Errorf("limits weight %s: %w", args[0], err)}
			}
			return e.weightSet(cmd.Context(), w, *asJSON)
		},
	}
}

func (e *env) weigher(ctx context.Context) (store.Weigher, func(), error) {
	st, done, err := e.limiter(ctx)
	if err != nil {
		return nil, nil, err
	}
	w, ok := st.(store.Weigher)
	if !ok {
		done()
		return nil, nil, fmt.Errorf("limits weight: %w", ops.ErrNoWeights)
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

func (e *env) weightSet(ctx context.Context, w ops.Weight, asJSON bool) error {
	st, done, err := e.limiter(ctx)
	if err != nil {
		return err
	}
	defer done()
	ch := ops.LimitChange{Weight: &w}
	if err := ops.SetLimits(ctx, st, ch); err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(map[string]int{w.Tenant: w.Weight})
	}
	e.printLimitChange(ch)
	return nil
}
