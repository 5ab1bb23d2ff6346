package cli

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"strings"

	"github.com/grit-run/grit/store"
)

// audit writes what an operator did from the CLI to the store's audit
// log, beside what the dashboard's operators do. A store without a log,
// or a log that cannot be written, costs the operator a warning, not the
// action.
func (e *env) audit(ctx context.Context, st any, action, target string, n int, detail string) {
	a, ok := st.(store.Auditor)
	if !ok {
		return
	}
	if _, err := a.Audit(context.WithoutCancel(ctx), store.AuditEntry{Who: cliOperator(), Action: action, Target: target, Count: n, Detail: detail}); err != nil {
		fmt.Fprintf(e.stderr, "grit: warning: could not write the audit log: %v\n", err)
	}
}

// cliOperator names the CLI's operator: "cli alice@host".
func cliOperator() string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, _ := os.Hostname()
	return "cli " + name + "@" + host
}

// idList names tasks for the audit log: "task 4" or "tasks 4, 7, 9 and 12 more".
func idList(ids []int64) string {
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
