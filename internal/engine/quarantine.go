package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// ErrTooManyQuarantined is matched by the error of a task that set aside
// more items than its handler tolerates (QuarantinePolicy): the task
// fails, permanently, and its items stay quarantined.
var ErrTooManyQuarantined = errors.New("engine: more items quarantined than the handler tolerates")

// QuarantinePolicy is what a handler does with the items it sets aside
// (Quarantine): the kind a replay runs each as, and how many it
// tolerates, as a count of the task's items (Max) or a share of those
// the attempt reported it saw (MaxShare, with Saw). Zero: no bound.
type QuarantinePolicy struct {
	Kind     string
	Max      int
	MaxShare float64
}

func (p QuarantinePolicy) validate(kind string) error {
	switch {
	case p.Max < 0:
		return fmt.Errorf("engine: handler %q: quarantine max %d: give 0 (no bound) or more", kind, p.Max)
	case p.MaxShare < 0 || p.MaxShare > 1:
		return fmt.Errorf("engine: handler %q: quarantine max share %v: give a share from 0 (no bound) to 1", kind, p.MaxShare)
	case p.Kind == kind:
		return fmt.Errorf("engine: handler %q: its quarantined items would replay as its own kind, with an item for args: name the kind that handles one item", kind)
	}
	return nil
}

// quarLog is what an attempt set aside: the task's items in all (as the
// store counted them), those this attempt added, and the items it
// reported it saw.
type quarLog struct {
	pol   QuarantinePolicy // its handler's, set before it runs
	mu    sync.Mutex
	total int
	added int
	seen  int
	fp    string // the first item's fingerprint
	err   string // and its error
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
	c.a.quar.saw(n)
	return nil
}

func (l *quarLog) saw(n int) {
	l.mu.Lock()
	l.seen += max(n, 0)
	l.mu.Unlock()
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
	l := &a.quar
	l.mu.Lock()
	l.added += max(total-l.total, 0)
	l.total = total
	if l.fp == "" {
		l.fp, l.err = items[0].Fingerprint, items[0].Error
	}
	l.mu.Unlock()
	if pol.Max > 0 && total > pol.Max {
		return retry.Permanent(fmt.Errorf("%w: the task set aside %d items, more than the %d it tolerates (its handler's quarantine max); they stay quarantined: grit dlq list shows them", ErrTooManyQuarantined, total, pol.Max))
	}
	return nil
}

// quarantineVerdict is the end of an attempt whose handler returned err,
// judged by what it set aside: a success past the handler's tolerance
// fails, permanently. It raises the attempt's one quarantine alert.
func (e *Engine) quarantineVerdict(a *inflight, err error) error {
	l := &a.quar
	pol := l.pol
	l.mu.Lock()
	total, added, seen, fp, msg := l.total, l.added, l.seen, l.fp, l.err
	l.mu.Unlock()
	if added > 0 {
		ev := alert.Quarantined(a.t, added, fp, msg, e.cfg.Clock.Now())
		e.alerts.Send(ev)
	}
	if err != nil || total == 0 {
		return err
	}
	switch {
	case pol.Max > 0 && total > pol.Max:
		return retry.Permanent(fmt.Errorf("%w: the task set aside %d items, more than the %d it tolerates (its handler's quarantine max); they stay quarantined: grit dlq list shows them", ErrTooManyQuarantined, total, pol.Max))
	case pol.MaxShare > 0 && float64(total) > pol.MaxShare*float64(seen):
		return retry.Permanent(fmt.Errorf("%w: the task set aside %d of the %d items it reported it saw, more than the %.4g it tolerates (its handler's quarantine max share); they stay quarantined: grit dlq list shows them", ErrTooManyQuarantined, total, seen, pol.MaxShare))
	}
	return nil
}
