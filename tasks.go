package grit

import (
	"context"
	"fmt"

	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// driver is the client's store; a child's client has none
// (engine.ErrChild).
func (c *Client) driver() (store.Store, error) {
	if c.store == nil {
		return nil, engine.ErrChild
	}
	return c.store, nil
}

// SubmitRun inserts a run: its tasks and their needs (a DAG, checked for
// cycles) in one transaction, and wakes this client's worker. Tasks that
// need nothing are READY, the others PENDING until what they need has
// succeeded (or was skipped); a failure makes their dependents
// UPSTREAM_FAILED. A run whose Key names a run submitted before is not
// inserted again: that run is returned with an error matching
// ErrDuplicate.
func (c *Client) SubmitRun(ctx context.Context, r task.NewRun) (task.Run, error) {
	st, err := c.driver()
	if err != nil {
		return task.Run{}, err
	}
	ts := make([]task.NewTask, len(r.Tasks)) // the caller's stay as they are
	for i, n := range r.Tasks {
		ts[i] = c.withGroup(n)
	}
	r.Tasks = ts
	traced := c.tracer.Submit(ctx, &r)
	run, err := st.SubmitRun(ctx, r)
	traced(run, err)
	if err != nil {
		return run, fmt.Errorf("grit: submit run %q: %w", r.Name, err)
	}
	c.engine.Wake()
	return run, nil
}

// Task returns a task by id, or an error matching task.ErrNotFound.
func (c *Client) Task(ctx context.Context, id int64) (task.Task, error) {
	st, err := c.driver()
	if err != nil {
		return task.Task{}, err
	}
	return st.GetTask(ctx, id)
}

// Tasks lists the tasks f selects (the zero Filter: every task, oldest
// first; page with Limit and AfterID or BeforeID).
func (c *Client) Tasks(ctx context.Context, f task.Filter) ([]task.Task, error) {
	st, err := c.driver()
	if err != nil {
		return nil, err
	}
	return st.ListTasks(ctx, f)
}

// Attempts lists a task's attempts, first to last, each with its outcome,
// error, fingerprint and the delay chosen after it.
func (c *Client) Attempts(ctx context.Context, taskID int64) ([]task.Attempt, error) {
	st, err := c.driver()
	if err != nil {
		return nil, err
	}
	return st.Attempts(ctx, taskID)
}

// Steps lists the durable steps (Step) a task's handler recorded, in the
// order it reached them.
func (c *Client) Steps(ctx context.Context, taskID int64) ([]task.Step, error) {
	st, err := c.driver()
	if err != nil {
		return nil, err
	}
	return st.Steps(ctx, taskID)
}

// Run returns a run by id, or an error matching task.ErrNotFound.
func (c *Client) Run(ctx context.Context, id int64) (task.Run, error) {
	st, err := c.driver()
	if err != nil {
		return task.Run{}, err
	}
	return st.GetRun(ctx, id)
}

// RunByKey returns the newest run submitted under key, or an error
// matching task.ErrNotFound.
func (c *Client) RunByKey(ctx context.Context, key string) (task.Run, error) {
	st, err := c.driver()
	if err != nil {
		return task.Run{}, err
	}
	return st.FindRun(ctx, key)
}

// Act applies an operator's action to a task and returns it as it is
// after: replay, skip or fail a DEAD_LETTER task, cancel a task that has
// not ended, or retry a FAILED or CANCELLED task outside any run (a run's
// tasks are run again with their run: Redrive). A task
// in another state is refused with an error matching task.ErrWrongState
// that says why. The action is what grit dlq and the dashboard do, with
// the same effect on the task's run.
func (c *Client) Act(ctx context.Context, id int64, a task.Action) (task.Task, error) {
	st, err := c.driver()
	if err != nil {
		return task.Task{}, err
	}
	t, err := st.Act(ctx, id, a)
	if err != nil {
		return t, fmt.Errorf("grit: %s task %d: %w", a, id, store.RetryRefusal(a, err))
	}
	if a == task.ActReplay || a == task.ActRetry || a == task.ActSkip {
		c.engine.Wake()
	}
	return t, nil
}

// Redrive resumes a run that ended without succeeding, from where it
// failed: its FAILED, DEAD_LETTER and UPSTREAM_FAILED tasks, and those
// the run cancelled when more of its tasks failed than its MaxFailures,
// go back to waiting with fresh attempts, in the run's dependency order;
// the tasks that succeeded are not run again, and those an operator
// cancelled stay cancelled. The run is RUNNING again, and ends SUCCESS
// when its tasks succeed. A run still running, one that succeeded, or one
// with nothing to redrive is refused with an error matching
// task.ErrWrongState that says why; a missing run, task.ErrNotFound. It
// is what grit redrive and the dashboard's redrive do; they also write it
// to the audit log, which a program's own call does not.
func (c *Client) Redrive(ctx context.Context, runID int64) (task.Redriven, error) {
	st, err := c.driver()
	if err != nil {
		return task.Redriven{}, err
	}
	r, err := st.Redrive(ctx, runID)
	if err != nil {
		return r, fmt.Errorf("grit: %w", err)
	}
	c.engine.Wake()
	return r, nil
}

// Workers lists the workers registered in the store, live or stopped,
// with when each was last seen.
func (c *Client) Workers(ctx context.Context) ([]task.Worker, error) {
	st, err := c.driver()
	if err != nil {
		return nil, err
	}
	return st.Workers(ctx)
}
