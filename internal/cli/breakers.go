package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/ops"
	"github.com/grit-run/grit/store"
)

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
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print JSON: the breakers, or the one changed, as the list shows it")
	var openFor time.Duration
	open := &cobra.Command{
		Use:   "open GROUP",
		Short: "open a group's breaker: workers stop claiming its tasks within a heartbeat",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if openFor < 0 {
				return &exitError{code: exitUsage, err: fmt.Errorf("breakers open: --for %v: want a positive duration, or none to stay open until closed", openFor)}
			}
			return e.breakerAct(cmd.Context(), args[0], asJSON, ops.BreakerOpen, openFor)
		},
	}
	open.Flags().DurationVar(&openFor, "for", 0, "how long it stays open (default: until closed)")
	closeCmd := &cobra.Command{
		Use:   "close GROUP",
		Short: "close a group's breaker: dispatch resumes, ramping up",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.breakerAct(cmd.Context(), args[0], asJSON, ops.BreakerClose, 0)
		},
	}
	reset := &cobra.Command{
		Use:   "reset GROUP",
		Short: "forget a group's breaker: closed, nothing counted",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.breakerAct(cmd.Context(), args[0], asJSON, ops.BreakerReset, 0)
		},
	}
	cmd.AddCommand(open, closeCmd, reset, newBreakersSetCmd(e, &asJSON))
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
	FailFast  bool          `json:"fail_fast"`
	Limit     int           `json:"limit,omitempty"`
	// Settings are the group's own, if it has them; else the workers'.
	Settings *breaker.Settings `json:"settings,omitempty"`
	// Outage is the failure the group (or a kind, as kind:KIND) is held
	// for as an outage, if it is.
	Outage *store.Outage `json:"outage,omitempty"`
	// RampRate is the calls a second the group's ramp lets through, while
	// it ramps up after its breaker closed.
	RampRate float64 `json:"ramp_rate,omitempty"`
}

func (e *env) groupBreakers(ctx context.Context) (store.GroupBreakers, func(), error) {
	st, err := e.openExisting(ctx)
	if err != nil {
		return nil, nil, err
	}
	return st, func() { st.Close() }, nil
}

func (e *env) breakersList(ctx context.Context, asJSON bool) error {
	gb, done, err := e.groupBreakers(ctx)
	if err != nil {
		return err
	}
	defer done()
	gs, err := gb.Groups(ctx)
	if err != nil {
		return err
	}
	now, err := gb.(store.Store).Now(ctx)
	if err != nil {
		return err
	}
	rows := []breakerRow{}
	for _, g := range slices.Sorted(maps.Keys(gs)) {
		rows = append(rows, breakerRowOf(g, gs[g], now))
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(rows)
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "GROUP\tSTATE\tFAILED\tNEXT PROBE\tOPENS\tSETTINGS")
	for _, r := range rows {
		next := "-"
		if r.NextProbe != nil {
			next = r.NextProbe.Local().Format(time.DateTime)
			if r.NextProbe.Sub(now) > ops.UntilClosed/2 {
				next = "when closed"
			}
		}
		state := string(r.State)
		if r.RampRate > 0 {
			state += fmt.Sprintf(", ramping %.3g/s", r.RampRate)
		}
		fmt.Fprintf(w, "%s\t%s\t%d/%d\t%s\t%d\t%s\n", r.Group, state, r.Failures, r.Attempts, next, r.Opens, describeSettings(r))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if o := r.Outage; o != nil {
			fmt.Fprintf(e.stdout, "\n%s is held as an outage since %s: %s (fingerprint %s); it is released when a probe succeeds, or by grit breakers close %s\n",
				r.Group, o.Since.Local().Format(time.DateTime), o.Error, o.Fingerprint, r.Group)
		}
	}
	return nil
}

// breakerRowOf is a group's breaker as the list shows it at now.
func breakerRowOf(group string, gr store.Group, now time.Time) breakerRow {
	c := gr.Circuit
	r := breakerRow{Group: group, State: c.State, Opens: c.Opens, FailFast: gr.FailFast, Settings: gr.Settings, Limit: gr.Limit, Outage: gr.Outage}
	if r.State == "" {
		r.State = breaker.Closed
	}
	var s breaker.Settings
	if gr.Settings != nil {
		s = *gr.Settings
	}
	r.Failures, r.Attempts = s.Counts(c, now)
	if p := c.NextProbe(); !p.IsZero() {
		r.NextProbe = &p
	}
	if h, ok := ops.HoldOf(group, gr, now); ok && h.Wait == ops.WaitRamp {
		r.RampRate = h.Rate
	}
	return r
}

func (e *env) breakerAct(ctx context.Context, group string, asJSON bool, a ops.BreakerAction, openFor time.Duration) error {
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
	gr, err := ops.Breaker(ctx, gb, group, a, openFor, now)
	if err != nil {
		return err
	}
	detail := ""
	if openFor > 0 {
		detail = "for " + openFor.String()
	}
	e.audit(ctx, gb, "breaker "+string(a), "group "+group, 0, detail)
	r := breakerRowOf(group, gr, now)
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(r)
	}
	fmt.Fprintf(e.stdout, "group %s: breaker %s\n", group, r.State)
	return nil
}

// describeSettings says how a group's breaker is set, for the list.
func describeSettings(r breakerRow) string {
	var parts []string
	if s := r.Settings; s == nil {
		parts = append(parts, "workers'")
	} else {
		add := func(name string, v any, set bool) {
			if set {
				parts = append(parts, fmt.Sprintf("%s %v", name, v))
			}
		}
		add("min-attempts", s.MinAttempts, s.MinAttempts != 0)
		add("failure-ratio", s.FailureRatio, s.FailureRatio != 0)
		add("consecutive", s.Consecutive, s.Consecutive != 0)
		add("window", s.Window, s.Window != 0)
		add("cool-down", s.CoolDown, s.CoolDown != 0)
		add("max-cool-down", s.MaxCoolDown, s.MaxCoolDown != 0)
		add("probes", s.Probes, s.Probes != 0)
		add("ramp-rate", s.RampRate, s.RampRate != 0)
		add("ramp-growth", s.RampGrowth, s.RampGrowth != 0)
		add("ramp-up", s.RampUp, s.RampUp != 0)
	}
	if r.FailFast {
		parts = append(parts, "fails fast")
	}
	if r.Limit > 0 {
		parts = append(parts, fmt.Sprintf("limit %d running", r.Limit))
	}
	return strings.Join(parts, ", ")
}

// breakerSetFlags are grit breakers set's flags.
type breakerSetFlags struct {
	s        breaker.Settings
	failFast bool
	defaults bool
	limit    int
}

func newBreakersSetCmd(e *env, asJSON *bool) *cobra.Command {
	var f breakerSetFlags
	cmd := &cobra.Command{
		Use:   "set GROUP",
		Short: "set a group's breaker: its thresholds, cool-downs, probes, ramp, and whether its tasks fail fast while it is open",
		Long: `Gives a group breaker settings of its own, which replace the workers'
(flags not given mean breaker's defaults), and says whether its tasks fail
at once while its breaker is open (--fail-fast) instead of waiting.
--workers-settings goes back to the workers' settings. Workers read it at
their next heartbeat.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.s.Validate(); err != nil {
				return &exitError{code: exitUsage, err: fmt.Errorf("breakers set %s: %w", args[0], err)}
			}
			if f.limit < 0 {
				return &exitError{code: exitUsage, err: fmt.Errorf("breakers set %s: --limit %d: want 0 (no limit) or more", args[0], f.limit)}
			}
			return e.breakerSet(cmd.Context(), args[0], f, cmd.Flags().Changed("fail-fast"), cmd.Flags().Changed("limit"), *asJSON)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.s.MinAttempts, "min-attempts", 0, "attempts in the window before the ratio counts (default 20)")
	fl.Float64Var(&f.s.FailureRatio, "failure-ratio", 0, "failures ÷ attempts that open the breaker (default 0.5)")
	fl.IntVar(&f.s.Consecutive, "consecutive", 0, "failures in a row that open the breaker (default off)")
	fl.DurationVar(&f.s.Window, "window", 0, "how far back attempts count (default 1m)")
	fl.DurationVar(&f.s.CoolDown, "cool-down", 0, "how long it stays open first; each failed probe doubles it (default 1s)")
	fl.DurationVar(&f.s.MaxCoolDown, "max-cool-down", 0, "the longest cool-down after failed probes (default 30s)")
	fl.IntVar(&f.s.Probes, "probes", 0, "probes let through when half-open (default 3)")
	fl.Float64Var(&f.s.RampRate, "ramp-rate", 0, "calls a second let through just after closing (default 10; below 0: no ramp)")
	fl.Float64Var(&f.s.RampGrowth, "ramp-growth", 0, "what each success adds to the ramp's rate (default 0.15)")
	fl.DurationVar(&f.s.RampUp, "ramp-up", 0, "the ramp ends once no failure cut its rate for this long (default 30s)")
	fl.BoolVar(&f.failFast, "fail-fast", false, "fail the group's tasks at once while its breaker is open")
	fl.BoolVar(&f.defaults, "workers-settings", false, "drop the group's own settings: use the workers'")
	fl.IntVar(&f.limit, "limit", 0, "the most attempts of the group running at once across the fleet (0: no limit)")
	return cmd
}

func (e *env) breakerSet(ctx context.Context, group string, f breakerSetFlags, failFastGiven, limitGiven, asJSON bool) error {
	if err := store.ValidateGroup(group); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	gb, done, err := e.groupBreakers(ctx)
	if err != nil {
		return err
	}
	defer done()
	gr, err := gb.UpdateGroup(ctx, group, func(g *store.Group) {
		if f.defaults {
			g.Settings = nil
		} else if f.s != (breaker.Settings{}) {
			s := f.s
			g.Settings = &s
		}
		if failFastGiven {
			g.FailFast = f.failFast
		}
		if limitGiven {
			g.Limit = f.limit
		}
	})
	if err != nil {
		return err
	}
	if asJSON {
		now, err := gb.(store.Store).Now(ctx)
		if err != nil {
			return err
		}
		return json.NewEncoder(e.stdout).Encode(breakerRowOf(group, gr, now))
	}
	fmt.Fprintf(e.stdout, "group %s: %s\n", group, describeSettings(breakerRow{Settings: gr.Settings, FailFast: gr.FailFast, Limit: gr.Limit}))
	return nil
}
