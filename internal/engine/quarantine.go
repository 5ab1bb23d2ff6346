package engine

import (
	"context"
	"fmt"

	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/internal/quarantine"
	"github.com/grit-run/grit/task"
)

// ErrTooManyQuarantined is matched by the error of a task that set aside
// more items than its handler tolerates (QuarantinePolicy): the task
// fails, permanently, and its items stay quarantined.
var ErrTooManyQuarantined = quarantine.ErrTooMany

// QuarantinePolicy is what a handler does with the items it sets aside
// (Quarantine): the kind a replay runs each as, and how many it
// tolerates, as a count of the task's items (Max) or a share of those
// the attempt reported it saw (MaxShare, with Saw). Zero: no bound.
type QuarantinePolicy struct {
	Kind     string
	Max      int
	MaxShare float64
}

func (p QuarantinePolicy) tolerance() quarantine.Tolerance {
	return quarantine.Tolerance{Max: p.Max, MaxShare: p.MaxShare}
}

func (p QuarantinePolicy) validate(kind string) error {
	if err := p.tolerance().Validate(); err != nil {
		return fmt.Errorf("engine: handler %q: %w", kind, err)
	}
	if p.Kind == kind {
		return fmt.Errorf("engine: handler %q: its quarantined items would replay as its own kind, with an item for args: name the kind that handles one item", kind)
	}
	return nil
}

// quarLog is what an attempt set aside (quarantine.Log), and its
// handler's policy, set before it runs.
type quarLog struct {
	pol QuarantinePolicy
	quarantine.Log
}

// Quarantine sets items aside for the attempt whose handler's context ctx
// is, and answers ErrTooManyQuarantined, permanent, once the task has
// more than its handler tolerates. Each item's ReplayKind is its
// handler's QuarantinePolicy.Kind.
func Quarantine(ctx context.Context, items []task.Quarantined) error {
	c, ok := ctx.Value(stepKey{}).(*attemptCtx)
	if !ok {
		return fmt.Errorf("quarantine: %w (give it the context the handler got)", ErrNoAttempt)
	}
	if c.e.child != nil {
		return c.e.child.quarantine(ctx, items, 0)
	}
	return c.e.quarantine(ctx, c.a, items)
}

// Saw adds n to the items the attempt whose handler's context ctx is
// reports it saw, against which QuarantinePolicy.MaxShare is measured.
func Saw(ctx context.Context, n int) error {
	c, ok := ctx.Value(stepKey{}).(*attemptCtx)
	if !ok {
		return fmt.Errorf("saw: %w (give it the context the handler got)", ErrNoAttempt)
	}
	if c.e.child != nil {
		return c.e.child.quarantine(ctx, nil, n)
	}
	c.a.quar.Saw(n)
	return nil
}

// quarantine records items of attempt a in the store and judges the count.
func (e *Engine) quarantine(ctx context.Context, a *inflight, items []task.Quarantined) error {
	if len(items) == 0 {
		return nil
	}
	pol := a.quar.pol
	for i := range items {
		items[i].ReplayKind = pol.Kind
	}
	total, err := e.cfg.Store.Quarantine(ctx, a.t.ID, a.t.LeaseToken, items)
	if err != nil {
		return err
	}
	a.quar.Recorded(items, total)
	return pol.tolerance().Past(total)
}

// quarantineVerdict is the end of an attempt whose handler returned err,
// judged by what it set aside: a success past the handler's tolerance
// fails, permanently. It raises the attempt's one quarantine alert.
func (e *Engine) quarantineVerdict(a *inflight, err error) error {
	l := a.quar.Tally()
	if l.Added > 0 {
		e.alerts.Send(alert.Quarantined(a.t, l.Added, l.Fingerprint, l.Error, e.cfg.Clock.Now()))
	}
	if err != nil {
		return err
	}
	return a.quar.pol.tolerance().Verdict(l.Total, l.Seen)
}
