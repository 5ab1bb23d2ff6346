package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/internal/sched"
	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/taskfile"
)

func newSchedulesApplyCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "apply FILE...",
		Short: "declare the schedules of task files' schedules: sections in the store",
		Long: `Declares in the store the schedules of each task file's schedules:
section (docs/taskfile.md#schedules), as grit worker --schedules does at
its start: a new schedule has its first slot after now; one already there
keeps its last slot, its counts and its pause unless its timing changed.
The workers tick them from their next tick.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ss, err := fileSchedules(args)
			if err != nil {
				return err
			}
			st, err := e.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			if err := declareSchedules(cmd.Context(), st, ss); err != nil {
				return err
			}
			e.audit(cmd.Context(), st, "schedules apply", fmt.Sprintf("%d schedules", len(ss)), len(ss), "")
			if asJSON {
				return e.printDeclared(cmd.Context(), st, ss)
			}
			for _, s := range ss {
				fmt.Fprintf(e.stdout, "schedule %s: declared (%s, task %s)\n", s.Name, when(s.OrDefault()), s.Task.Kind)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: the schedules declared, as grit schedules --json lists them")
	return cmd
}

// printDeclared prints the schedules ss as grit schedules --json lists
// them.
func (e *env) printDeclared(ctx context.Context, st store.Store, ss []schedule.Schedule) error {
	now, err := st.Now(ctx)
	if err != nil {
		return storeErr(err)
	}
	out := make([]scheduleJSON, 0, len(ss))
	for _, s := range ss {
		v, err := sched.Get(ctx, st, s.Name, now, 3)
		if err != nil {
			return err
		}
		out = append(out, toScheduleJSON(v))
	}
	return json.NewEncoder(e.stdout).Encode(out)
}

// fileSchedules are the schedules of the task files at paths, in order.
func fileSchedules(paths []string) ([]schedule.Schedule, error) {
	var out []schedule.Schedule
	for _, p := range paths {
		f, err := taskfile.Load(p)
		if err != nil {
			return nil, &exitError{code: exitUsage, err: err}
		}
		if len(f.Schedules) == 0 {
			return nil, usageErr("%s has no schedules: section (see docs/taskfile.md#schedules)", p)
		}
		out = append(out, f.Schedules...)
	}
	return out, nil
}

// declareSchedules declares ss in st, as of the store's time.
func declareSchedules(ctx context.Context, st store.Store, ss []schedule.Schedule) error {
	now, err := st.Now(ctx)
	if err != nil {
		return storeErr(err)
	}
	if err := sched.Declare(ctx, st, now, ss...); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	return nil
}

// noteSchedules tells the user of grit run or grit submit that a file's
// schedules are not run by them.
func (e *env) noteSchedules(f *taskfile.File, cmd string) {
	if f == nil || len(f.Schedules) == 0 {
		return
	}
	fmt.Fprintf(e.stderr, "grit: note: %s runs the tasks of %s once; its %d schedules are not run: declare them with grit schedules apply %s, or grit worker --schedules %s\n",
		cmd, f.Path, len(f.Schedules), f.Path, f.Path)
}
