package cli

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/grit-run/grit/internal/tracing"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
	"github.com/grit-run/grit/taskfile"
)

// runKnobs are grit run's knobs: a worker's, but the drain, for a stopped
// run cuts its attempts off at once (they go back without using one).
var runKnobs = slices.DeleteFunc(slices.Clone(workerKnobs), func(k knob) bool { return k.name == knobDrain.name })

type runOptions struct {
	json   bool
	resume int64
	quiet  bool
	flags  *pflag.FlagSet // the knobs' flags
}

func newRunCmd(e *env) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [FILE]",
		Short: "submit a task file's run and work it to the end",
		Long: `Submits the run a task file describes and works it on this machine until
nothing more can run. Running the same file again while its run is unfinished
resumes that run; --resume RUN resumes a run by id. Ctrl-C stops gracefully:
running attempts are cut off and their tasks go back without using an attempt.

Exit status: 0 when every task succeeded, 1 when any did not, 2 for a bad
file or flag, 3 when the store is unavailable, 130 when stopped.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := ""
			if len(args) == 1 {
				path = args[0]
			}
			return e.run(cmd.Context(), o, path)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.json, "json", false, "print one JSON object at the end instead of the summary table")
	f.Int64Var(&o.resume, "resume", 0, "resume the run with this id")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print no transitions, only the summary")
	registerKnobs(f, runKnobs)
	o.flags = f
	return cmd
}

func (e *env) run(ctx context.Context, o runOptions, path string) error {
	if (path == "") == (o.resume == 0) {
		return usageErr("run: give a task file or --resume RUN, not both or neither")
	}
	var f *taskfile.File
	if path != "" {
		var err error
		if f, err = taskfile.Load(path); err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		e.noteSchedules(f, "grit run")
	}
	ws, err := e.settings(o.flags)
	if err != nil {
		return err
	}
	open := e.openStore
	if f == nil {
		open = e.openExisting // --resume: the run is in a store already
	}
	st, err := open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	tp, stopTracing, err := e.tracerProvider(ctx)
	if err != nil {
		return err
	}
	defer stopTracing()
	tr := tracing.New(tp)
	r, resumed, err := submitOrResume(ctx, st, f, o.resume, tr)
	if err != nil {
		return err
	}
	return e.work(ctx, st, r, resumed, o, ws, tr)
}

// submitOrResume finds the file's unfinished run, or submits a new one. A
// file's runs are keyed by its name and content: running the same file
// again resumes its unfinished run, and starts a new run once it ended.
func submitOrResume(ctx context.Context, st store.Store, f *taskfile.File, id int64, tr *tracing.Tracer) (task.Run, bool, error) {
	if f == nil {
		r, err := st.GetRun(ctx, id)
		if errors.Is(err, task.ErrNotFound) {
			return r, false, usageErr("--resume %d: no run has that id", id)
		}
		return r, true, err
	}
	if err := setFileLimits(ctx, st, f.Limits); err != nil {
		return task.Run{}, false, err
	}
	base := runKey(f)
	for n := 1; ; n++ {
		key := fmt.Sprintf("%s#%d", base, n)
		r, err := st.FindRun(ctx, key)
		if err == nil && !r.State.Terminal() {
			return r, true, nil
		}
		if err == nil {
			continue // ended: the next run of this file gets the next key
		}
		if !errors.Is(err, task.ErrNotFound) {
			return r, false, err
		}
		nr, err := f.NewRun(key)
		if err != nil {
			return task.Run{}, false, &exitError{code: exitUsage, err: err}
		}
		fromThisHost(&nr)
		traced := tr.Submit(ctx, &nr)
		r, err = st.SubmitRun(ctx, nr)
		traced(r, err)
		return r, false, err
	}
}

// work runs an engine until the run ends or the user stops it.
func (e *env) work(ctx context.Context, st store.Store, r task.Run, resumed bool, o runOptions, ws settings, tr *tracing.Tracer) error {
	p := newProgress(e, r.ID, o.quiet || o.json)
	if resumed {
		p.notef("resuming run %d (%s)", r.ID, r.Name)
	} else {
		p.notef("run %d (%s) submitted", r.ID, r.Name)
	}
	eng, err := e.runEngine(st, r.ID, ws, p.event, tr)
	if err != nil {
		return err
	}
	sigCtx, stop := untilStopped(ctx)
	defer stop()
	if err := eng.Start(ctx); err != nil {
		return err
	}
	ts, waitErr := waitRun(sigCtx, st, r.ID, p)
	if waitErr != nil {
		// Stopped: release running attempts at once; they go back to READY
		// without using an attempt.
		released, cancel := context.WithCancel(context.WithoutCancel(ctx))
		cancel()
		eng.Stop(released)
		p.done()
		return e.stopped("resume with: grit run --resume %d", r.ID)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := eng.Stop(sctx); err != nil {
		fmt.Fprintln(e.stderr, "grit: stopping the worker:", err)
	}
	p.done()
	return e.summarize(ctx, st, r.ID, ts, o.json)
}

// waitRun polls the run until nothing more can run in it: every task has
// ended, is a dead letter, or waits behind one.
func waitRun(ctx context.Context, st store.Store, runID int64, p *progress) ([]task.Task, error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ts, err := st.ListTasks(ctx, task.Filter{RunID: runID})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			p.notef("reading the run failed: %v", err)
		} else {
			p.poll(ts)
			if !anyActive(ts) {
				return ts, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		case <-p.changed:
		}
	}
}

func anyActive(ts []task.Task) bool {
	for _, t := range ts {
		if t.State.Waiting() || t.State == task.Running {
			return true
		}
	}
	return false
}

// fromThisHost marks a task file's tasks as submitted on this host: a
// worker on it runs them by default, one on another host only if it
// allows process tasks from elsewhere (--allow-exec).
func fromThisHost(nr *task.NewRun) {
	host, _ := os.Hostname()
	for i := range nr.Tasks {
		nr.Tasks[i].Origin = task.FileOrigin(host)
	}
}

// runKey identifies a task file's runs by its name and content (as parsed,
// so reformatting the file keeps the key).
func runKey(f *taskfile.File) string {
	nr, err := f.NewRun("")
	if err != nil {
		return "file:" + f.Name
	}
	b, _ := json.Marshal(nr)
	sum := sha256.Sum256(b)
	return fmt.Sprintf("file:%s:%x", f.Name, sum[:8])
}
