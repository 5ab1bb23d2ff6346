package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/internal/suggest"
	"github.com/grit-run/grit/task"
)

func newTasksCmd(e *env) *cobra.Command {
	var (
		runID  int64
		states []string
		kind   string
		limit  int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "list tasks, filtered by run, state and kind",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := task.Filter{RunID: runID, Kind: kind, Limit: limit}
			var err error
			if f.States, err = parseStates(states); err != nil {
				return err
			}
			return e.listTasks(cmd.Context(), f, asJSON)
		},
	}
	cmd.Flags().Int64Var(&runID, "run", 0, "only the tasks of this run")
	cmd.Flags().StringSliceVar(&states, "state", nil, "only tasks in these states (e.g. --state FAILED,DEAD_LETTER)")
	cmd.Flags().StringVar(&kind, "kind", "", "only tasks of this kind")
	cmd.Flags().IntVar(&limit, "limit", defaultListLimit, "at most this many tasks (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// defaultListLimit is how many tasks or runs a list shows unless --limit
// says otherwise.
const defaultListLimit = 1000

// parseStates reads --state's values, in any case.
func parseStates(args []string) ([]task.State, error) {
	var out []task.State
	for _, s := range args {
		st, err := task.ParseState(s)
		if err != nil {
			names := make([]string, len(task.States))
			for i, v := range task.States {
				names[i] = strings.ToLower(string(v)) // as suggest.Closest compares
			}
			msg := fmt.Sprintf("--state %s: not a state", s)
			if c, ok := suggest.Closest(s, names); ok {
				msg += fmt.Sprintf(" (did you mean %s?)", strings.ToUpper(c))
			}
			return nil, usageErr("%s: want one or more of %s, e.g. --state FAILED,DEAD_LETTER", msg, strings.ToUpper(strings.Join(names, ", ")))
		}
		out = append(out, st)
	}
	return out, nil
}

func (e *env) listTasks(ctx context.Context, f task.Filter, asJSON bool) error {
	st, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	ts, err := st.ListTasks(ctx, f)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(taskViews(ts))
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tRUN\tNAME\tKIND\tSTATE\tATTEMPT\tNEXT\tERROR")
	for _, t := range ts {
		next := "-"
		if t.State.Waiting() && !t.NextAt.IsZero() {
			next = t.NextAt.Local().Format("15:04:05.0")
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", t.ID, runText(t.RunID), orDash(t.Name), t.Kind, t.State, t.Attempt, next, firstLine(t.LastError))
	}
	return w.Flush()
}

func runText(id int64) string {
	if id == 0 {
		return "-"
	}
	return fmt.Sprint(id)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
