package cli

import (
	"context"
	"fmt"
	"os"
	"os/user"

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
