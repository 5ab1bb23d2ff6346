package store

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/grit-run/grit/task"
)

// Finishable reports whether Finish may move a task to state s.
func Finishable(s task.State) bool {
	switch s {
	case task.Success, task.Failed, task.DeadLetter, task.Retrying, task.Sensing, task.Ready:
		return true
	}
	return false
}

// CheckFinishes is the part of Finish every driver shares: an item with a
// state Finish cannot set gets task.ErrInvalid in errs; todo lists the
// others, for the driver to apply.
func CheckFinishes(fs []Finish) (errs []error, todo []int) {
	errs = make([]error, len(fs))
	for i, f := range fs {
		if !Finishable(f.State) {
			errs[i] = fmt.Errorf("finish task %d: state %q: want SUCCESS, FAILED, DEAD_LETTER, RETRYING, SENSING or READY: %w", f.TaskID, f.State, task.ErrInvalid)
			continue
		}
		if f.Awaits != "" && f.State != task.Sensing {
			errs[i] = fmt.Errorf("finish task %d: awaits a message of %q in state %s: only a SENSING task awaits one: %w", f.TaskID, f.Awaits, f.State, task.ErrInvalid)
			continue
		}
		if err := checkAwait(f); err != nil {
			errs[i] = err
			continue
		}
		if err := checkPublish(f); err != nil {
			errs[i] = err
			continue
		}
		if err := checkEnqueue(f); err != nil {
			errs[i] = err
			continue
		}
		todo = append(todo, i)
	}
	return errs, todo
}

// Rounds splits the items todo of fs so that no round names a task twice
// (a later item of the same task meets the state the first left). Each
// round is in task id order, so that concurrent transactions lock shared
// rows in one order.
func Rounds(fs []Finish, todo []int) [][]int {
	var out [][]int
	seen := make(map[int64]int, len(todo))
	for _, i := range todo {
		r := seen[fs[i].TaskID]
		seen[fs[i].TaskID] = r + 1
		if r == len(out) {
			out = append(out, nil)
		}
		out[r] = append(out[r], i)
	}
	for _, r := range out {
		slices.SortStableFunc(r, func(a, b int) int { return cmp.Compare(fs[a].TaskID, fs[b].TaskID) })
	}
	return out
}

// Outcome is the attempt's outcome as reported, or as its next state
// implies when it was not.
func (f Finish) Outcome() task.Outcome {
	if o := f.Attempt.Outcome; o != "" && o != task.OutcomeRunning {
		return o
	}
	switch f.State {
	case task.Success:
		return task.OutcomeSuccess
	case task.Sensing:
		return task.OutcomeSnoozed
	case task.Ready:
		return task.OutcomeReleased
	}
	return task.OutcomeError
}

// PlainSuccess tells whether f is a success that leaves nothing on the
// task or its attempt but the time it ended: the common case, which a
// driver may record by writing the task row alone, the attempt staying on
// it as it was while it ran (its number, lease token, worker and start)
// and ending when the task did, with no attempt row of its own. Anything
// more (an output, an exit code, a timeout of its own, events, tasks to
// enqueue, a refund) needs the row.
func (f Finish) PlainSuccess() bool {
	a := f.Attempt
	return len(f.Publish) == 0 && len(f.Enqueue) == 0 && f.State == task.Success && f.Outcome() == task.OutcomeSuccess && !f.Refund && !f.Deferred && !f.Waited && len(f.AwaitTasks) == 0 &&
		f.Error == "" && f.Fingerprint == "" && f.Streak == 0 && f.PrevDelay == 0 &&
		a.Class == "" && a.Error == "" && a.Fingerprint == "" && a.ExitCode == nil &&
		a.Signal == "" && a.Output == "" && a.Delay == 0 && a.Decision == "" && a.Timeout == 0 && a.TimeoutSource == ""
}

// Ended sorts the items of fs whose tasks ended into what they move in
// their runs: the tasks that succeeded (their dependents may become
// READY), those that failed (their dependents become UPSTREAM_FAILED), and
// the runs to settle, in id order. runOf maps a task to its run (0: none).
func Ended(fs []Finish, ended []int, runOf map[int64]int64) (succeeded, failed, runs []int64) {
	seen := map[int64]bool{}
	for _, i := range ended {
		id := fs[i].TaskID
		switch fs[i].State {
		case task.Success:
			succeeded = append(succeeded, id)
		case task.Failed:
			failed = append(failed, id)
		default:
			continue
		}
		if !seen[runOf[id]] {
			seen[runOf[id]] = true
			runs = append(runs, runOf[id])
		}
	}
	slices.Sort(runs)
	return succeeded, failed, runs
}

// Unique returns names without repeats, in their first order.
func Unique(names []string) []string {
	seen := make(map[string]bool, len(names))
	out := names[:0:0]
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// checkPublish rejects the events of a finish that cannot be published:
// a bad event, or events on anything but a success (an attempt that failed
// publishes nothing).
func checkPublish(f Finish) error {
	if len(f.Publish) == 0 {
		return nil
	}
	if f.State != task.Success {
		return fmt.Errorf("finish task %d: events published by an attempt that ends %s, not SUCCESS: %w", f.TaskID, f.State, task.ErrInvalid)
	}
	for _, e := range f.Publish {
		if err := ValidateEvent(e); err != nil {
			return fmt.Errorf("finish task %d: %w", f.TaskID, err)
		}
	}
	return nil
}

// checkEnqueue rejects the tasks of a finish that cannot be enqueued: an
// invalid task, or one that needs others (it joins no run).
func checkEnqueue(f Finish) error {
	for i, t := range f.Enqueue {
		if len(t.Needs) > 0 {
			return fmt.Errorf("finish task %d: enqueue task %d (%q): needs are only for tasks of a run: %w", f.TaskID, i, t.Name, task.ErrInvalid)
		}
		if err := t.Validate(); err != nil {
			return fmt.Errorf("finish task %d: enqueue task %d: %w", f.TaskID, i, err)
		}
	}
	return nil
}

// FinishEnqueues is the tasks an item enqueues as a driver inserts them:
// a key already held answers its holder, whatever work it is, and never
// fails the finish.
func FinishEnqueues(f Finish) []task.NewTask {
	out := make([]task.NewTask, len(f.Enqueue))
	for i, t := range f.Enqueue {
		t.ReturnExisting = true
		out[i] = t
	}
	return out
}

// Applied is t, read RUNNING under f's token, as Finish leaves it when f
// applies at now on the store's clock: what a caller that holds t answers
// without reading it again. Every driver writes exactly this
// (storetest's FinishApplied case); now stands for the time of the
// driver's write, which the caller reads before it. Times are kept to the
// microsecond, as the drivers keep them.
func (f Finish) Applied(t task.Task, now time.Time) task.Task {
	t.State, t.NextAt, t.FinishedAt = f.State, time.Time{}, time.Time{}
	if f.State.Waiting() {
		t.NextAt = f.NextAt
		if t.NextAt.IsZero() {
			t.NextAt = now
		}
		t.NextAt = t.NextAt.Truncate(time.Microsecond)
	} else {
		t.FinishedAt = now.Truncate(time.Microsecond)
	}
	if f.Refund || f.Waited {
		t.Attempt = max(t.Attempt-1, 0)
	}
	if f.Waited {
		t.Waits++
	}
	if f.Deferred {
		t.Deferrals++
	}
	if f.Snoozed() {
		t.Snoozes++
	}
	t.LastError, t.Fingerprint, t.Streak, t.PrevDelay = f.Error, f.Fingerprint, f.Streak, f.PrevDelay
	t.LeaseOwner, t.LeaseExpires, t.AttemptTrace = "", time.Time{}, f.Trace
	return t
}
