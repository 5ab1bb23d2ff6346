package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func newRunsCmd(e *env) *cobra.Command {
	var (
		f      task.RunFilter
		states []string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "list runs (a task file's DAG of tasks), newest first, filtered by state and name",
		Long: `Lists the runs in the store, newest first, as the dashboard's runs page
does: their id, name, state, when each was submitted and how long it took.
--limit bounds a page, and --before ID gives the next one: the runs older
than ID (the list says the command when more may follow). grit tasks --run
ID lists a run's tasks; grit wait ID waits for its end.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if f.States, err = parseStates(states); err != nil {
				return err
			}
			if f.Limit < 0 || f.BeforeID < 0 {
				return usageErr("runs: --limit and --before take 0 or more (0: no bound)")
			}
			return e.listRuns(cmd.Context(), f, asJSON)
		},
	}
	cmd.Flags().StringSliceVar(&states, "state", nil, "only runs in these states (e.g. --state FAILED,RUNNING)")
	cmd.Flags().StringVar(&f.Name, "name", "", "only the runs of this name (a task file's runs share its name)")
	cmd.Flags().IntVar(&f.Limit, "limit", defaultListLimit, "at most this many runs (0: all)")
	cmd.Flags().Int64Var(&f.BeforeID, "before", 0, "only runs older than this id: the next page")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: an array of runs, as grit redrive --json prints its run")
	return cmd
}

func (e *env) listRuns(ctx context.Context, f task.RunFilter, asJSON bool) error {
	st, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	c, ok := st.(store.Console)
	if !ok {
		return fmt.Errorf("runs: the store %s cannot list its runs", shownDSN(e.storeDSN))
	}
	rs, err := c.ListRuns(ctx, f)
	if err != nil {
		return err
	}
	if asJSON {
		if rs == nil {
			rs = []task.Run{}
		}
		return json.NewEncoder(e.stdout).Encode(rs)
	}
	if len(rs) == 0 {
		fmt.Fprintln(e.stdout, "no runs (grit run FILE or grit submit FILE makes one)")
		return nil
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tNAME\tSTATE\tSUBMITTED\tTOOK")
	for _, r := range rs {
		took := "-"
		if !r.FinishedAt.IsZero() {
			took = r.FinishedAt.Sub(r.CreatedAt).Round(time.Millisecond).String()
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", r.ID, orDash(r.Name), r.State, r.CreatedAt.Local().Format(time.DateTime), took)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if f.Limit > 0 && len(rs) == f.Limit {
		fmt.Fprintf(e.stdout, "more may follow: grit runs --before %d\n", rs[len(rs)-1].ID)
	}
	return nil
}
