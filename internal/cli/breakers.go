package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/store"
)

// untilClosed is the cool-down of a breaker an operator opened without a
// duration: it stays open until closed.
const untilClosed = 100 * 365 * 24 * time.Hour

func newBreakersCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "breakers",
		Short: "list the groups' circuit breakers, or open, close or reset one",
		Long: `Lists each group's circuit breaker, kept in the store and shared by every
worker: its state, failures and attempts in its window, and when an open
one lets tasks through again. While a group's breaker is open, workers do
not claim its tasks: they wait and use no attempt. Workers read the
breakers at every heartbeat.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return e.breakersList(cmd.Context(), asJSON) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	var openFor time.Duration
	open := &cobra.Command{
		Use:   "open GROUP",
		Short: "open a group's breaker: workers stop claiming its tasks within a heartbeat",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if openFor < 0 {
				return &exitError{code: exitUsage, err: fmt.Errorf("breakers open: --for %v: want a positive duration, or none to stay open until closed", openFor)}
			}
			d := openFor
			if d == 0 {
				d = untilClosed
			}
			return e.breakerAct(cmd.Context(), args[0], func(s breaker.Settings, c *breaker.Circuit, now time.Time) { s.Trip(c, now, d) })
		},
	}
	open.Flags().DurationVar(&openFor, "for", 0, "how long it stays open (default: until closed)")
	closeCmd := &cobra.Command{
		Use:   "close GROUP",
		Short: "close a group's breaker: dispatch resumes, ramping up",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.breakerAct(cmd.Context(), args[0], func(s breaker.Settings, c *breaker.Circuit, now time.Time) { s.Close(c, now) })
		},
	}
	reset := &cobra.Command{
		Use:   "reset GROUP",
		Short: "forget a group's breaker: closed, nothing counted",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.breakerAct(cmd.Context(), args[0], func(s breaker.Settings, c *breaker.Circuit, _ time.Time) { s.Reset(c) })
		},
	}
	cmd.AddCommand(open, closeCmd, reset)
	return cmd
}

// breakerRow is one group's breaker as grit breakers shows it.
type breakerRow struct {
	Group     string        `json:"group"`
	State     breaker.State `json:"state"`
	Failures  int           `json:"failures"`
	Attempts  int           `json:"attempts"`
	NextProbe *time.Time    `json:"next_probe,omitempty"`
	Opens     int           `json:"opens"`
}

func (e *env) groupBreakers(ctx context.Context) (store.GroupBreakers, func(), error) {
	st, err := e.openStore(ctx)
	if err != nil {
		return nil, nil, err
	}
	gb, ok := st.(store.GroupBreakers)
	if !ok {
		st.Close()
		return nil, nil, fmt.Errorf("breakers: the store %s keeps no breakers", e.storeDSN)
	}
	return gb, func() { st.Close() }, nil
}

func (e *env) breakersList(ctx context.Context, asJSON bool) error {
	gb, done, err := e.groupBreakers(ctx)
	if err != nil {
		return err
	}
	defer done()
	cs, err := gb.Circuits(ctx)
	if err != nil {
		return err
	}
	now, err := gb.(store.Store).Now(ctx)
	if err != nil {
		return err
	}
	var s breaker.Settings
	rows := []breakerRow{}
	for _, g := range slices.Sorted(maps.Keys(cs)) {
		c := cs[g]
		r := breakerRow{Group: g, State: c.State, Opens: c.Opens}
		if r.State == "" {
			r.State = breaker.Closed
		}
		r.Failures, r.Attempts = s.Counts(c, now)
		if p := c.NextProbe(); !p.IsZero() {
			r.NextProbe = &p
		}
		rows = append(rows, r)
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(rows)
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "GROUP\tSTATE\tFAILED\tNEXT PROBE\tOPENS")
	for _, r := range rows {
		next := "-"
		if r.NextProbe != nil {
			next = r.NextProbe.Local().Format(time.DateTime)
			if r.NextProbe.Sub(now) > untilClosed/2 {
				next = "when closed"
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%d/%d\t%s\t%d\n", r.Group, r.State, r.Failures, r.Attempts, next, r.Opens)
	}
	return w.Flush()
}

func (e *env) breakerAct(ctx context.Context, group string, act func(breaker.Settings, *breaker.Circuit, time.Time)) error {
	if err := store.ValidateGroup(group); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	gb, done, err := e.groupBreakers(ctx)
	if err != nil {
		return err
	}
	defer done()
	now, err := gb.(store.Store).Now(ctx)
	if err != nil {
		return err
	}
	var s breaker.Settings
	c, err := gb.UpdateCircuit(ctx, group, func(c *breaker.Circuit) { act(s, c, now) })
	if err != nil {
		return err
	}
	state := c.State
	if state == "" {
		state = breaker.Closed
	}
	fmt.Fprintf(e.stdout, "group %s: breaker %s\n", group, state)
	return nil
}
