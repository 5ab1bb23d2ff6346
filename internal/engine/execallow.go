package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// thisHost is the name task files submitted on this machine record
// (task.FileOrigin).
var thisHost, _ = os.Hostname()

// runExec runs a process task if the engine allows it (Config.AllowExec);
// one it refuses fails permanently, its error naming the setting.
func (e *Engine) runExec(ctx context.Context, t *task.Task) error {
	if err := e.execAllowed(t); err != nil {
		return retry.Permanent(err)
	}
	return execHandler(ctx, t)
}

// execAllowed says why the engine does not run process task t, or nil.
func (e *Engine) execAllowed(t *task.Task) error {
	allow := e.cfg.AllowExec
	if task.LocalOrigin(t.Origin, thisHost) || slices.Contains(allow, task.AllowAllExec) {
		return nil
	}
	from := "from the API"
	if t.Origin != task.OriginAPI {
		from = fmt.Sprintf("from elsewhere (%s, not a task file of this host, %s)", t.Origin, thisHost)
	}
	if len(allow) == 0 {
		return fmt.Errorf("exec tasks %s are not allowed on this worker: start it with --allow-exec (Config.AllowExec), "+
			"or --allow-exec=COMMAND,… to allow only those commands", from)
	}
	var x task.Exec
	if err := json.Unmarshal(t.Args, &x); err != nil || x.Shell != "" || len(x.Argv) == 0 {
		return fmt.Errorf("exec tasks %s run on this worker only as one of the commands it allows (--allow-exec=%s), with argv and no shell: "+
			"start it with --allow-exec to allow every command", from, strings.Join(allow, ","))
	}
	if !slices.Contains(allow, x.Argv[0]) {
		return fmt.Errorf("exec tasks %s run on this worker only as one of the commands it allows (--allow-exec=%s): %q is not one", from, strings.Join(allow, ","), x.Argv[0])
	}
	return nil
}
