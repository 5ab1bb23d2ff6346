package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/internal/ops"
	"github.com/grit-run/grit/task"
)

func newDLQCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "list dead letters and quarantined items and act on them: replay, skip or fail; replay or drop",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "list dead-lettered tasks and quarantined items, grouped by failure fingerprint",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return e.dlqList(cmd.Context(), asJSON) },
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(list,
		dlqAction(e, task.ActReplay, "run the task again, with its poison streak reset"),
		dlqAction(e, task.ActSkip, "let the task pass as a permitted failure: its dependents go on"),
		dlqAction(e, task.ActFail, "fail the task: its dependents become UPSTREAM_FAILED"),
		newDLQItemsCmd(e))
	return cmd
}

// dlqGroup is the dead letters that share a fingerprint.
type dlqGroup struct {
	Fingerprint string     `json:"fingerprint"`
	Count       int        `json:"count"`
	Error       string     `json:"error"` // the newest task's
	Tasks       []taskJSON `json:"tasks"`
}

func (e *env) dlqList(ctx context.Context, asJSON bool) error {
	st, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	ts, err := st.ListTasks(ctx, task.Filter{States: []task.State{task.DeadLetter}})
	if err != nil {
		return err
	}
	groups := groupByFingerprint(ts)
	items, err := quarantineGroups(ctx, st)
	if err != nil {
		return err
	}
	if asJSON {
		all := make([]any, 0, len(groups)+len(items))
		for _, g := range groups {
			all = append(all, g)
		}
		for _, g := range items {
			all = append(all, g)
		}
		return json.NewEncoder(e.stdout).Encode(all)
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "FINGERPRINT\tCOUNT\tTASKS\tERROR")
	for _, g := range groups {
		ids := ""
		for i, t := range g.Tasks {
			if i == 5 {
				ids += fmt.Sprintf(" +%d", len(g.Tasks)-5)
				break
			}
			if i > 0 {
				ids += ","
			}
			ids += fmt.Sprint(t.ID)
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\n", short(g.Fingerprint), g.Count, ids, firstLine(g.Error))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return printQuarantineGroups(e.stdout, items)
}

func groupByFingerprint(ts []task.Task) []dlqGroup {
	byFP := map[string]*dlqGroup{}
	for _, t := range ts {
		g, ok := byFP[t.Fingerprint]
		if !ok {
			g = &dlqGroup{Fingerprint: t.Fingerprint}
			byFP[t.Fingerprint] = g
		}
		g.Count++
		g.Tasks = append(g.Tasks, taskView(t))
		g.Error = t.LastError
	}
	out := make([]dlqGroup, 0, len(byFP))
	for _, g := range byFP {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Fingerprint < out[j].Fingerprint
	})
	return out
}

func dlqAction(e *env, a task.Action, short string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   string(a) + " ID...",
		Short: short,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.act(cmd.Context(), a, args, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tasks after the action as JSON")
	return cmd
}

func (e *env) act(ctx context.Context, a task.Action, args []string, asJSON bool) error {
	ids := make([]int64, len(args))
	for i, s := range args {
		id, err := parseID(s)
		if err != nil {
			return err
		}
		ids[i] = id
	}
	st, err := e.openExisting(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	var done []task.Task
	var errs []error
	var failed error // other than a task not there or in another state
	for _, id := range ids {
		t, err := st.Act(ctx, id, a)
		var wrong *task.StateError
		switch {
		case errors.As(err, &wrong):
			errs = append(errs, fmt.Errorf("task %d: %s needs a DEAD_LETTER task; it is %s", id, a, wrong.State))
		case errors.Is(err, task.ErrNotFound):
			errs = append(errs, errors.New(e.noTask(id)))
		case err != nil:
			failed = err
			errs = append(errs, fmt.Errorf("task %d: %w", id, err))
		default:
			done = append(done, t)
			if !asJSON {
				fmt.Fprintf(e.stdout, "task %d: %s\n", t.ID, t.State)
			}
		}
	}
	if len(done) > 0 {
		var ids []int64
		for _, t := range done {
			ids = append(ids, t.ID)
		}
		e.audit(ctx, st, string(a), ops.IDList(ids), len(done), "")
	}
	if asJSON {
		if err := json.NewEncoder(e.stdout).Encode(taskViews(done)); err != nil {
			return err
		}
	}
	switch {
	case failed != nil:
		return &exitError{code: exitFailed, err: errors.Join(errs...)}
	case len(errs) > 0:
		return &exitError{code: exitUsage, err: errors.Join(errs...)}
	}
	return nil
}
