package engine

import (
	"time"

	"github.com/grit-run/grit/internal/autotimeout"
	"github.com/grit-run/grit/task"
)

// AutoTimeouts is how the engine sets the timeout of an attempt whose task
// (or handler) asks for task.AutoTimeout: Factor × the p99 of the task's
// successful runs (of its kind, and its name when it has one), within
// Floor and Ceiling, once MinRuns runs are on record; Default before.
// Zero fields mean the defaults (5×, 1m, 1h, 20 runs, 30m; see package
// autotimeout for why).
type AutoTimeouts = autotimeout.Settings

// timeoutFor is the timeout of an attempt of t by handler h, and where it
// came from: the task's own, else the handler's; either may ask for an
// auto timeout.
func (e *Engine) timeoutFor(t *task.Task, h *Handler) (time.Duration, string) {
	d, src := t.Timeout, "task"
	if d == 0 {
		d, src = h.Timeout, "handler"
	}
	if d == task.AutoTimeout {
		return e.auto.Timeout(e.runCtx, t.Kind, t.Name)
	}
	return d, src
}

// autoSource is src when it tells how an auto timeout was chosen, else "".
func autoSource(src string) string {
	if autotimeout.IsAuto(src) {
		return src
	}
	return ""
}
