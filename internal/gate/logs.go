package gate

import (
	"context"
	"log/slog"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// logEnds logs what an operator wants to hear of the attempts the store
// took, on the claimer that recorded them: a dead letter (ERROR), a
// permanent failure and a timeout kill (WARN), and each retry (DEBUG).
// A success logs nothing, and costs only the loop.
func (g *Gate) logEnds(ctx context.Context, ends []End) {
	l := g.cfg.Logger
	for _, e := range ends {
		if e.Err != nil || e.Finish.State == task.Success {
			continue
		}
		t, f := e.Task, e.Finish
		if f.Attempt.Outcome == task.OutcomeTimeout {
			var more []any
			if d := timeoutOf(t, f); d > 0 {
				more = []any{"timeout", d}
			}
			l.Warn("attempt timed out: its work was cut off", endAttrs(t, f, more...)...)
		}
		switch f.State {
		case task.DeadLetter:
			l.Error("task dead-lettered: it failed the same way twice in a row (poison) and waits for an operator: grit task ID shows it, grit dlq replay ID runs it again", endAttrs(t, f)...)
		case task.Failed:
			l.Warn("task failed for good: a permanent error, or its attempts or retry budget ran out", endAttrs(t, f)...)
		case task.Retrying:
			if l.Enabled(ctx, slog.LevelDebug) {
				l.Debug("attempt failed; the task is retried", endAttrs(t, f, "next_at", f.NextAt)...)
			}
		}
	}
}

// endAttrs are the attributes of an ended attempt's log line: task, kind,
// run (when in one), group, tenant, attempt, fingerprint and error (at
// most alert.MaxError bytes), then more.
func endAttrs(t *task.Task, f *store.Finish, more ...any) []any {
	a := []any{"task", t.ID, "kind", t.Kind}
	if t.RunID != 0 {
		a = append(a, "run", t.RunID)
	}
	if t.Group != "" {
		a = append(a, "group", t.Group)
	}
	if t.Tenant != "" {
		a = append(a, "tenant", t.Tenant)
	}
	a = append(a, "attempt", t.Attempt)
	if f.Fingerprint != "" {
		a = append(a, "fingerprint", f.Fingerprint)
	}
	if f.Error != "" {
		a = append(a, "err", alert.Bounded(f.Error))
	}
	return append(a, more...)
}

// timeoutOf is the timeout an attempt ran under: the one it learned, or
// its task's (not positive: unknown).
func timeoutOf(t *task.Task, f *store.Finish) time.Duration {
	if f.Attempt.Timeout > 0 {
		return f.Attempt.Timeout
	}
	return t.Timeout
}

// logBreaker logs a group's breaker changing state: opened (WARN: its
// tasks wait), half-open or closed (INFO).
func (g *Gate) logBreaker(name string, c breaker.Circuit) {
	switch orClosed(c.State) {
	case breaker.Open:
		g.cfg.Logger.Warn("group breaker opened: its tasks wait for the next probe", "group", name, "next_probe", c.NextProbe())
	case breaker.HalfOpen:
		g.cfg.Logger.Info("group breaker half-open: probes are out", "group", name)
	default:
		g.cfg.Logger.Info("group breaker closed: its tasks come back, ramping up", "group", name)
	}
}
