package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/internal/suggest"
	"github.com/grit-run/grit/store"
)

func newPauseCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "pause [queue|kind|tenant NAME]",
		Short: "pause a queue, kind or tenant across the fleet, or list the pauses",
		Long: `Pauses a queue, a kind or a tenant: once it returns, no attempt of its
tasks starts on any worker (or grit server's remote workers); they wait
where they are, using no attempt. Attempts already running go on to
their end (cancel their tasks to stop them); those claimed but not begun
are given back unstarted. grit
resume ends the pause. Without arguments, lists the pauses. Every pause
and resume is written to the store's audit log.`,
		Args: cobra.MatchAll(cobra.RangeArgs(0, 2), func(_ *cobra.Command, args []string) error {
			if len(args) == 1 {
				return usageErr("pause: give a scope and a name, such as grit pause queue mail, or nothing to list the pauses")
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return e.pausesList(cmd.Context(), asJSON)
			}
			return e.pause(cmd.Context(), store.Scope(args[0]), args[1], true, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: the pauses, or the one made")
	return cmd
}

func newResumeCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "resume queue|kind|tenant NAME",
		Short: "end the pause of a queue, kind or tenant: workers claim its tasks again within a heartbeat",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.pause(cmd.Context(), store.Scope(args[0]), args[1], false, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (e *env) pauser(ctx context.Context) (store.Pauser, func(), error) {
	st, err := e.openExisting(ctx)
	if err != nil {
		return nil, nil, err
	}
	p, ok := st.(store.Pauser)
	if !ok {
		st.Close()
		return nil, nil, fmt.Errorf("pause: the store %s keeps no pauses", shownDSN(e.storeDSN))
	}
	return p, func() { st.Close() }, nil
}

func (e *env) pause(ctx context.Context, scope store.Scope, name string, on, asJSON bool) error {
	verb := map[bool]string{true: "pause", false: "resume"}[on]
	if err := checkPause(verb, scope, name); err != nil {
		return err
	}
	p, done, err := e.pauser(ctx)
	if err != nil {
		return err
	}
	defer done()
	if on {
		got, err := p.Pause(ctx, store.Pause{Scope: scope, Name: name, Who: cliOperator()})
		if err != nil {
			return err
		}
		e.audit(ctx, p, "pause", string(scope)+" "+name, 0, "")
		if asJSON {
			return json.NewEncoder(e.stdout).Encode(got)
		}
		fmt.Fprintf(e.stdout, "%s %s: paused since %s (no attempt of its tasks starts now; those running go on)\n", scope, name, got.Since.Local().Format(time.DateTime))
		return nil
	}
	was, err := p.Resume(ctx, scope, name)
	if err != nil {
		return err
	}
	if was {
		e.audit(ctx, p, "resume", string(scope)+" "+name, 0, "")
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(map[string]any{"scope": scope, "name": name, "was_paused": was})
	}
	if !was {
		fmt.Fprintf(e.stdout, "%s %s was not paused\n", scope, name)
		return nil
	}
	fmt.Fprintf(e.stdout, "%s %s: resumed\n", scope, name)
	return nil
}

// checkPause checks a pause's scope and name, and says what would do.
func checkPause(verb string, scope store.Scope, name string) error {
	err := store.ValidatePause(scope, name)
	if err == nil {
		return nil
	}
	if !slices.Contains(store.PauseScopes, scope) {
		names := make([]string, len(store.PauseScopes))
		for i, s := range store.PauseScopes {
			names[i] = string(s)
		}
		msg := fmt.Sprintf("%s: grit pauses a queue, a kind or a tenant, not %q", verb, scope)
		if s, ok := suggest.Closest(string(scope), names); ok {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		return usageErr("%s: e.g. grit %s queue %s", msg, verb, name)
	}
	return usageErr("%s: %s (e.g. grit %s queue mail)", verb, userText(err), verb)
}

func (e *env) pausesList(ctx context.Context, asJSON bool) error {
	p, done, err := e.pauser(ctx)
	if err != nil {
		return err
	}
	defer done()
	ps, err := p.Pauses(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		if ps == nil {
			ps = []store.Pause{}
		}
		return json.NewEncoder(e.stdout).Encode(ps)
	}
	if len(ps) == 0 {
		fmt.Fprintln(e.stdout, "nothing is paused")
		return nil
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SCOPE\tNAME\tSINCE\tBY")
	for _, p := range ps {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", p.Scope, p.Name, p.Since.Local().Format(time.DateTime), orDash(p.Who))
	}
	return w.Flush()
}
