package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/grit-run/grit/internal/autotimeout"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// hintSamples is how many recent successful attempts the timeout hint
// looks at: as many as an auto timeout's p99 is taken over.
const hintSamples = autotimeout.Samples

// timeoutHint says, when a task has timed out twice or more in a row, that
// the timeout may be the bug, beside how long the task's successful runs
// take (p99), when the store can tell. It returns "" otherwise.
func (e *Engine) timeoutHint(t task.Task, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(e.runCtx, 2*time.Second)
	defer cancel()
	as, err := e.cfg.Store.Attempts(ctx, t.ID)
	if err != nil {
		return ""
	}
	n := 1 // this attempt, not recorded yet
	for i := len(as) - 1; i >= 0; i-- {
		if as[i].Number == t.Attempt && as[i].LeaseToken == t.LeaseToken {
			continue // this attempt's open record
		}
		if as[i].Outcome != task.OutcomeTimeout {
			break
		}
		n++
	}
	if n < 2 {
		return ""
	}
	hint := fmt.Sprintf("timed out %d times in a row: the timeout (%s) may be the bug", n, retry.FormatDuration(timeout))
	durs, err := e.cfg.Store.SuccessDurations(ctx, t.Kind, t.Name, hintSamples)
	switch {
	case err != nil:
		return hint
	case len(durs) == 0:
		return hint + "; no successful run of this task is on record"
	}
	return hint + fmt.Sprintf("; its successful runs took p99 %s (%d runs)", autotimeout.P99(durs).Round(time.Millisecond), len(durs))
}
