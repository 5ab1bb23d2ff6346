package ops

import (
	"context"
	"fmt"
	"strings"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Redrive resumes a run that ended without succeeding
// (store.Store.Redrive) and returns, beside what it did, the audit log's
// entry for it, for the front end that made it to sign (Who) and write:
// a redrive is recorded the same way from the CLI, the dashboard and the
// API.
func Redrive(ctx context.Context, st store.Store, runID int64) (task.Redriven, store.AuditEntry, error) {
	r, err := st.Redrive(ctx, runID)
	if err != nil {
		return r, store.AuditEntry{}, err
	}
	return r, store.AuditEntry{
		Action: "redrive", Target: fmt.Sprintf("run %d", runID), Count: len(r.Tasks),
		Detail: "sent back to wait: " + IDList(r.Tasks),
	}, nil
}

// IDList names tasks for the audit log: "task 4" or "tasks 4, 7, 9 and 12
// more".
func IDList(ids []int64) string {
	if len(ids) == 1 {
		return fmt.Sprintf("task %d", ids[0])
	}
	var b strings.Builder
	b.WriteString("tasks ")
	for i, id := range ids {
		if i == 10 {
			fmt.Fprintf(&b, " and %d more", len(ids)-10)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, id)
	}
	return b.String()
}
