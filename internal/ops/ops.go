// Package ops holds the operator's actions that more than one front end
// offers (the CLI and the dashboard): acting on a circuit breaker, reading
// and setting the limits and rates, and
// acting on every task a filter selects. Each is written once here, so
// that the two front ends cannot drift apart.
package ops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// ErrBadAction is wrapped by the errors of an action asked for wrongly
// (an unknown action, a negative duration).
var ErrBadAction = errors.New("ops: bad action")

// BreakerAction is what an operator does to a group's breaker.
type BreakerAction string

const (
	BreakerOpen  BreakerAction = "open"  // trip it: workers stop claiming the group's tasks
	BreakerClose BreakerAction = "close" // close it: dispatch resumes, ramping up
	BreakerReset BreakerAction = "reset" // forget it: closed, nothing counted
)

// UntilClosed is how long a breaker opened by hand without a duration
// stays open: until someone closes it.
const UntilClosed = 100 * 365 * 24 * time.Hour

// Breaker applies a to group's breaker in the store, now being the
// store's time; openFor bounds an open (0: until closed). A breaker that
// ends closed ends its group's outage hold too: the operator has decided
// the outage is over. It returns the group as it is after.
func Breaker(ctx context.Context, gb store.GroupBreakers, group string, a BreakerAction, openFor time.Duration, now time.Time) (store.Group, error) {
	if err := store.ValidateGroup(group); err != nil {
		return store.Group{}, err
	}
	if openFor < 0 {
		return store.Group{}, fmt.Errorf("%w: breaker %s %s: a negative time (%v): want a positive duration, or 0 to stay open until closed", ErrBadAction, a, group, openFor)
	}
	if openFor == 0 {
		openFor = UntilClosed
	}
	var act func(breaker.Settings, *breaker.Circuit)
	switch a {
	case BreakerOpen:
		act = func(s breaker.Settings, c *breaker.Circuit) { s.Trip(c, now, openFor) }
	case BreakerClose:
		act = func(s breaker.Settings, c *breaker.Circuit) { s.Close(c, now) }
	case BreakerReset:
		act = func(s breaker.Settings, c *breaker.Circuit) { s.Reset(c) }
	default:
		return store.Group{}, fmt.Errorf("%w: breaker %s: no such action %q: want open, close or reset", ErrBadAction, group, a)
	}
	return gb.UpdateGroup(ctx, group, func(g *store.Group) {
		var s breaker.Settings
		if g.Settings != nil {
			s = *g.Settings
		}
		act(s, &g.Circuit)
		if g.Circuit.State == "" || g.Circuit.State == breaker.Closed {
			g.Outage = nil // closed by hand: the outage hold is over too
		}
	})
}

// Bulk is the outcome of an action on the tasks a filter selects.
type Bulk struct {
	Matched int // tasks the filter selected when they were read
	Changed int // tasks the action moved
	// Skipped counts the tasks that had moved on before the action
	// reached them (ended, or no longer in a state the action applies to).
	Skipped int
}

// pageSize is how many tasks ActAll reads at a time: the filter's tasks
// are paged by id, never read all at once.
const pageSize = 500

// ActAll applies a to every task f selects, however many pages they
// take, not only those an operator sees (f's Limit and paging are
// ignored). perSecond, when above 0, ramps the action: at most that many
// tasks a second, so that replaying a fixed bug's thousand dead letters
// does not send a herd at its downstream. sleep waits (a test gives a
// fake clock); nil is a real wait that ends with ctx. A task that moved
// on meanwhile is skipped, not an error; any other failure stops the
// action and is returned with what was done so far.
func ActAll(ctx context.Context, st store.Store, f task.Filter, a task.Action, perSecond float64, sleep func(context.Context, time.Duration) error) (Bulk, error) {
	if sleep == nil {
		sleep = sleepCtx
	}
	f.Limit, f.Newest, f.BeforeID = pageSize, false, 0
	var b Bulk
	var gap time.Duration
	if perSecond > 0 {
		gap = time.Duration(float64(time.Second) / perSecond)
	}
	for {
		ts, err := st.ListTasks(ctx, f)
		if err != nil {
			return b, err
		}
		for _, t := range ts {
			if gap > 0 && b.Matched > 0 {
				if err := sleep(ctx, gap); err != nil {
					return b, err
				}
			}
			b.Matched++
			// An act begun is finished, and counted: ctx ending stops the
			// run between acts, so that what it reports is what it did.
			_, err := st.Act(context.WithoutCancel(ctx), t.ID, a)
			var moved *task.StateError
			switch {
			case err == nil:
				b.Changed++
			case errors.As(err, &moved), errors.Is(err, task.ErrNotFound):
				b.Skipped++
			default:
				return b, fmt.Errorf("%s task %d: %w", a, t.ID, err)
			}
		}
		if len(ts) < pageSize {
			return b, nil
		}
		f.AfterID = ts[len(ts)-1].ID
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
