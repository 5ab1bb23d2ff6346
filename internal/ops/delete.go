package ops

import (
	"context"
	"errors"
	"fmt"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// ErrCannotDelete is the error of a delete on a store that cannot delete
// tasks (not a store.Console).
var ErrCannotDelete = errors.New("ops: the store cannot delete tasks")

// Deleted is the outcome of deleting the tasks a filter selects.
type Deleted struct {
	// Bulk counts the tasks selected (Matched), deleted (Changed) and
	// those that moved on before the delete reached them (Skipped).
	Bulk
	// InRun counts the tasks left alone because they belong to a run: a
	// run's graph and its end read its tasks, which go with it when
	// retention prunes it.
	InRun int
	// NotEnded counts the tasks left alone because they have not ended
	// (store.Deletable): cancel them first.
	NotEnded int
}

// Why says, in a sentence an operator reads, what was left alone and
// why; "" when nothing was.
func (d Deleted) Why() string {
	var out string
	add := func(n int, why string) {
		if n == 0 {
			return
		}
		if out != "" {
			out += "; "
		}
		out += fmt.Sprintf("%d %s", n, why)
	}
	add(d.InRun, "left alone in a run (a run's tasks go with their run, when retention prunes it once it ends)")
	add(d.NotEnded, "left alone not ended (cancel them first)")
	add(d.Skipped, "had moved on")
	return out
}

// DeleteAll deletes for good, with their attempts, every task f selects
// that has ended and is in no run (store.Console's DeleteTasks), however
// many pages they take; the others are counted, not touched. Any failure
// stops it and is returned with what was done so far.
func DeleteAll(ctx context.Context, st store.Store, f task.Filter) (Deleted, error) {
	c, ok := st.(store.Console)
	if !ok {
		return Deleted{}, ErrCannotDelete
	}
	f.Limit, f.Newest, f.BeforeID = pageSize, false, 0
	var d Deleted
	for {
		ts, err := st.ListTasks(ctx, f)
		if err != nil {
			return d, err
		}
		var ids []int64
		for _, t := range ts {
			d.Matched++
			switch {
			case t.RunID != 0:
				d.InRun++
			case !store.Deletable(t.State):
				d.NotEnded++
			default:
				ids = append(ids, t.ID)
			}
		}
		gone, err := c.DeleteTasks(context.WithoutCancel(ctx), ids)
		if err != nil {
			return d, err
		}
		d.Changed += len(gone)
		d.Skipped += len(ids) - len(gone)
		if len(ts) < pageSize || ctx.Err() != nil {
			return d, context.Cause(ctx)
		}
		f.AfterID = ts[len(ts)-1].ID
	}
}
