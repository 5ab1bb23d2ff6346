package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/internal/tracing"
	"github.com/grit-run/grit/taskfile"
)

func newSubmitCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "submit FILE",
		Short: "submit a task file's run for workers to work, and print its id",
		Long: `Submits the run a task file describes and prints its id, without working
it: grit worker processes (here or on other machines sharing the store) work
it, and grit wait RUN waits for its end. Submitting the same file again while
its run is unfinished prints that run's id instead of submitting a second.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.submit(cmd.Context(), args[0], asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"run": ID}`)
	return cmd
}

func (e *env) submit(ctx context.Context, path string, asJSON bool) error {
	f, err := taskfile.Load(path)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	e.noteSchedules(f, "grit submit")
	st, err := e.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	tp, stopTracing, err := e.tracerProvider(ctx)
	if err != nil {
		return err
	}
	defer stopTracing()
	r, _, err := submitOrResume(ctx, st, f, 0, tracing.New(tp))
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(map[string]int64{"run": r.ID})
	}
	fmt.Fprintln(e.stdout, r.ID)
	return nil
}
