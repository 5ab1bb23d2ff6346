package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/internal/ops"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// defaultWarnAfter is how long grit wait waits before it says that no
// live worker would work the run.
const defaultWarnAfter = 30 * time.Second

// waitOptions are grit wait's flags.
type waitOptions struct {
	json, quiet bool
	warnAfter   time.Duration
	lease       string
}

func newWaitCmd(e *env) *cobra.Command {
	var o waitOptions
	cmd := &cobra.Command{
		Use:   "wait RUN",
		Short: "wait until a run ends, then print its summary (exit status as grit run)",
		Long: `Waits until nothing more can run in the run, printing its transitions,
then prints its summary, as grit run does; grit worker processes work it.
When the run still waits after --warn-after and no worker is alive in the
store (none heard from within --lease), or none alive serves the kinds of
its waiting tasks, it says so on standard error, and waits on. Ctrl-C or SIGTERM stops the waiting (exit 130); the run goes on.

Exit status: 0 when every task succeeded, 1 when any did not, 2 for a bad
argument, 3 when the store is unavailable, 130 when stopped.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			if o.warnAfter < 0 {
				return usageErr("wait: --warn-after %s: want 0 (never) or a positive duration such as 30s", o.warnAfter)
			}
			return e.wait(cmd.Context(), id, o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print one JSON object at the end, as grit run --json")
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "print no transitions, only the summary")
	cmd.Flags().DurationVar(&o.warnAfter, "warn-after", defaultWarnAfter, "say on standard error when the run has waited this long and no live worker serves it (0: never)")
	leaseFlag(cmd, &o.lease)
	return cmd
}

func (e *env) wait(ctx context.Context, id int64, o waitOptions) error {
	lease, err := e.durationKnob(knobLease, o.lease)
	if err != nil {
		return err
	}
	st, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.GetRun(ctx, id); errors.Is(err, task.ErrNotFound) {
		if pruned, perr := st.RunPruned(ctx, id); perr == nil && pruned {
			return &exitError{code: exitUsage, err: fmt.Errorf("wait: run %d finished and was pruned (its retention ended): its outcome is no longer kept; keep runs longer with --retention on the workers (docs/retention.md)", id)}
		}
		return &exitError{code: exitUsage, err: fmt.Errorf("wait: no run has id %d", id)}
	} else if err != nil {
		return err
	}
	p := newProgress(e, id, o.quiet || o.json)
	sigCtx, stop := untilStopped(ctx)
	defer stop()
	if o.warnAfter > 0 {
		watchCtx, cancel := context.WithCancel(sigCtx)
		defer cancel()
		go e.warnNoWorker(watchCtx, st, id, o.warnAfter, lease)
	}
	ts, err := waitRun(sigCtx, st, id, p)
	p.done()
	if err != nil && sigCtx.Err() != nil && ctx.Err() == nil {
		return e.stopped("run %d goes on; grit wait %d waits for it again", id, id)
	}
	if err != nil {
		return err
	}
	return e.summarize(ctx, st, id, ts, o.json)
}

// warnNoWorker says on standard error, once, when the run has waited
// after and no worker alive in the store serves it: none is alive, or
// none serves the kinds of its tasks that wait (ops.Served).
func (e *env) warnNoWorker(ctx context.Context, st store.Store, run int64, after, lease time.Duration) {
	tick := time.NewTicker(after)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		says, err := unservedRun(ctx, st, run, lease)
		if err != nil || says == "" || ctx.Err() != nil {
			continue
		}
		fmt.Fprintf(e.stderr, "grit: run %d has waited %s and %s: start one with grit worker --store '%s'; grit status lists the workers\n",
			run, after, says, shownDSN(e.storeDSN))
		return
	}
}

// unservedRun says why no live worker serves the run, by the store's
// clock: no worker is alive (none heard from within lease), or none
// serves the kinds of its tasks that wait; "" when one does, or when the
// workers did not say what they serve.
func unservedRun(ctx context.Context, st store.Store, run int64, lease time.Duration) (string, error) {
	now, err := st.Now(ctx)
	if err != nil {
		return "", err
	}
	ws, err := st.Workers(ctx)
	if err != nil {
		return "", err
	}
	if !slices.ContainsFunc(ws, func(w task.Worker) bool { return w.Alive(now, lease) }) {
		return fmt.Sprintf("no worker is alive in the store (none heard from within %s)", lease), nil
	}
	served, known := ops.Served(ws, now, lease)
	if !known {
		return "", nil
	}
	ts, err := st.ListTasks(ctx, task.Filter{RunID: run, States: []task.State{task.Ready, task.Retrying}})
	if err != nil {
		return "", err
	}
	var kinds []string
	for _, t := range ts {
		if !served[t.Kind] && !slices.Contains(kinds, t.Kind) {
			kinds = append(kinds, t.Kind)
		}
	}
	if len(kinds) == 0 {
		return "", nil
	}
	slices.Sort(kinds)
	return fmt.Sprintf("no live worker serves the kinds its waiting tasks have (%s)", strings.Join(kinds, ", ")), nil
}
