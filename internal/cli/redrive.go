package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/internal/ops"
	"github.com/grit-run/grit/task"
)

func newRedriveCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "redrive RUN",
		Short: "resume a run that failed from where it failed: what did not succeed runs again",
		Long: `Resumes a run that ended without succeeding (FAILED or CANCELLED): its
FAILED, DEAD_LETTER and UPSTREAM_FAILED tasks, and those the run cancelled
when more of its tasks failed than its max_failures, go back to waiting
with fresh attempts, in the run's dependency order. Tasks that succeeded
are not run again; tasks an operator cancelled stay cancelled. The run is
RUNNING again: grit worker processes work it, or grit run --resume RUN
here, and grit wait RUN waits for its end. A run still running, or one
that succeeded, is refused, saying why. Every redrive is written to the
store's audit log.

Exit status: 0 when redriven, 2 for a run that is not there or cannot be
redriven, 3 when the store is unavailable.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			return e.redrive(cmd.Context(), id, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"run": {...}, "tasks": [IDS]}: the run after, and the tasks sent back to wait`)
	return cmd
}

func (e *env) redrive(ctx context.Context, id int64, asJSON bool) error {
	st, err := e.openExisting(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	r, entry, err := ops.Redrive(ctx, st, id)
	switch {
	case errors.Is(err, task.ErrNotFound):
		return usageErr("redrive: no run has id %d", id)
	case errors.Is(err, task.ErrWrongState):
		return &exitError{code: exitUsage, err: err}
	case err != nil:
		return err
	}
	e.audit(ctx, st, entry.Action, entry.Target, entry.Count, entry.Detail)
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(r)
	}
	fmt.Fprintf(e.stdout, "run %d (%s): %s again; sent back to wait: %s\n", r.Run.ID, r.Run.Name, r.Run.State, ops.IDList(r.Tasks))
	fmt.Fprintf(e.stdout, "work it here with grit run --resume %d, or let grit worker processes take it; grit wait %d waits for its end\n", id, id)
	return nil
}
