package gate

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// End is an attempt's end as its claimer recorded it: the task as it was
// claimed, the Finish, and the store's answer to that item (nil: taken).
type End struct {
	Task   *task.Task
	Finish *store.Finish
	Err    error
}

// Ended takes a claimer's ended attempts out of its ledger and records
// what each says of its group's downstream: the breaker counts it (a probe
// as a probe), a resource failure raises the group's pressure and halves
// the claimer's window of the group, a success eases both; a downstream's
// Retry-After holds the group that long (Pressure.Hold). One locked
// update a group. A result the store did not take says nothing. A task
// the store recorded DEAD_LETTER raises an alert (Config.Alert). Each
// attempt the store took is counted (Config.Metrics).
func (g *Gate) Ended(ctx context.Context, worker string, ends []End) {
	var byGroup map[string][]groupResult
	local, now := g.cfg.Clock.Now(), g.StoreNow()
	freed := false
	g.mu.Lock()
	l := g.ledgerLocked(worker, local)
	for _, e := range ends {
		if l.remove(e.Task.ID, e.Task.LeaseToken) && e.Finish.Attempt.Outcome != task.OutcomeReleased {
			freed = g.freeLocked(l, e.Task, local) || freed
		}
		probe := false
		if tok, ok := g.probes[e.Task.ID]; ok && tok == e.Task.LeaseToken {
			probe = true
			delete(g.probes, e.Task.ID)
		}
		if e.Err != nil {
			continue
		}
		name := e.Task.Group
		if name == "" {
			// A kind without a group counts only while held as an outage,
			// or ramping up after one: the success path of ungrouped work
			// costs nothing.
			if g.kindHolds == 0 {
				continue
			}
			name = KindHold + e.Task.Kind
			gr, held := g.groups[name]
			if !held || orClosed(gr.Circuit.State) == breaker.Closed && !g.cfg.Protection.Settings(gr).Ramping(gr.Circuit, now) {
				continue
			}
		}
		if r, ok := resultOf(*e.Finish, probe); ok {
			if byGroup == nil {
				byGroup = map[string][]groupResult{}
			}
			byGroup[name] = append(byGroup[name], r)
		}
	}
	g.mu.Unlock()
	g.alertDeadLetters(ends)
	g.count(ends)
	g.logEnds(ctx, ends)
	for _, name := range slices.Sorted(maps.Keys(byGroup)) {
		freed = g.recordGroup(ctx, worker, name, byGroup[name]) || freed
	}
	if freed {
		g.changed()
	}
}

// count counts the attempts the store took (Config.Metrics).
func (g *Gate) count(ends []End) {
	for _, e := range ends {
		if e.Err == nil {
			g.cfg.Metrics.Ended(e.Task, &e.Finish.Attempt, e.Finish.State)
		}
	}
}

// Ending tells the gate of an attempt's end as soon as it is decided,
// before the claimer records it. A failure about to be dead-lettered as
// poison may be an outage (judge): then f is changed into a retry and its
// group or kind held. A resource failure, or a downstream's Retry-After,
// holds its group back for this claimer at once, rather than once its
// result is recorded, so that the claimer does not claim the group's
// tasks in between.
func (g *Gate) Ending(ctx context.Context, t *task.Task, f *store.Finish) {
	g.judge(ctx, t, f)
	if t.Group == "" {
		return
	}
	r, ok := resultOf(*f, false)
	var d time.Duration
	switch {
	case !ok:
		return
	case r.resource:
		d = g.cfg.Protection.PressureBase
	case r.after > 0:
		d = r.after
	default:
		return
	}
	until := g.cfg.Clock.Now().Add(d)
	g.mu.Lock()
	defer g.mu.Unlock()
	if until.After(g.pressed[t.Group]) {
		g.pressed[t.Group] = until
	}
}

// Lost takes out of a claimer's ledger the attempts it no longer holds
// (its heartbeat found their leases taken over): they say nothing of
// their downstream.
func (g *Gate) Lost(worker string, ls []store.Lease) {
	g.mu.Lock()
	defer g.mu.Unlock()
	l := g.ledgerLocked(worker, g.cfg.Clock.Now())
	for _, x := range ls {
		l.remove(x.TaskID, x.Token)
		if tok, ok := g.probes[x.TaskID]; ok && tok == x.Token {
			delete(g.probes, x.TaskID)
		}
	}
}

// recordGroup records a group's results in its breaker and pressure, and
// in the claimer's window; it reports whether the breaker changed state.
// A breaker these results opened from closed raises an alert; one that
// opens again after a failed probe does not: that is the same outage.
func (g *Gate) recordGroup(ctx context.Context, worker, name string, rs []groupResult) bool {
	p := g.cfg.Protection
	var opened bool
	gr, err := g.gb.UpdateGroup(ctx, name, func(gr *store.Group) {
		now, s := g.StoreNow(), p.Settings(*gr)
		was := orClosed(gr.Circuit.State)
		for _, r := range rs {
			r.apply(gr, s, now, p.PressureBase, p.PressureMax)
		}
		if orClosed(gr.Circuit.State) == breaker.Closed {
			gr.Outage = nil // a probe succeeded: the outage is over
		}
		// Decided in the locked update, so that of the claimers whose
		// results reach the group together, one alone sees it open.
		opened = was == breaker.Closed && gr.Circuit.State == breaker.Open
	})
	if err != nil {
		g.cfg.Logger.Warn("could not record results in the group's breaker", "group", name, "err", err)
		return false
	}
	if opened {
		g.alert(alert.Opened(name, gr.Circuit.Since, gr.Circuit.NextProbe()))
	}
	g.mu.Lock()
	before := g.groups[name].Circuit.State
	if g.groups == nil {
		g.groups = map[string]store.Group{}
	}
	g.groups[name] = gr
	g.countKindHoldsLocked(name)
	delete(g.pressed, name)
	g.adjustWindowLocked(g.ledgerLocked(worker, g.cfg.Clock.Now()), name, rs)
	g.mu.Unlock()
	if orClosed(gr.Circuit.State) != orClosed(before) {
		g.logBreaker(name, gr.Circuit)
		return true
	}
	return false
}

func orClosed(s breaker.State) breaker.State {
	if s == "" {
		return breaker.Closed
	}
	return s
}

// groupResult is how an attempt of a group ended, for its breaker.
type groupResult struct {
	ok, probe bool
	breaker   bool // counted by the breaker
	resource  bool // a resource failure: the group's pressure rises
	// after is how long the downstream asked to be left alone: the group
	// is held so long (a Retry-After).
	after time.Duration
}

// resultOf is what an attempt's end says of its group's downstream, if
// anything: a success; a failure that could be an outage (counted by the
// breaker); or resource pressure (the downstream is up but full: it raises
// the group's pressure, and is no outage). Permanent errors (bad input),
// cancellations, releases and snoozes say nothing.
func resultOf(f store.Finish, probe bool) (groupResult, bool) {
	r := groupResult{probe: probe}
	switch {
	case f.State == task.Success:
		r.ok, r.breaker = true, true
	case f.Attempt.Outcome == task.OutcomeTimeout:
		r.breaker = true
	case f.Attempt.Outcome != task.OutcomeError:
		return r, false
	case f.Attempt.Class == retry.ClassResource.String():
		r.resource = true
	case f.Attempt.Class == retry.ClassPermanent.String(), f.Attempt.Class == retry.ClassCanceled.String():
		return r, false
	default:
		r.breaker = true
		if f.Attempt.Class == retry.ClassAfter.String() {
			r.after = f.After
		}
	}
	return r, true
}

func (r groupResult) apply(gr *store.Group, s breaker.Settings, now time.Time, base, max time.Duration) {
	switch {
	case r.probe: // a full downstream answered: it is up
		s.Record(&gr.Circuit, r.ok || r.resource, true, now)
	case r.breaker:
		s.Record(&gr.Circuit, r.ok, false, now)
	}
	switch {
	case r.resource:
		s.Shed(&gr.Circuit, now) // a ramp up to the downstream's capacity backs off
		gr.Pressure.Raise(now, base, max)
	case r.ok:
		gr.Pressure.Ease()
	}
	if r.after > 0 {
		gr.Pressure.Hold(now.Add(r.after))
	}
}

// adjustWindowLocked halves a group's window on resource failures (once
// per PressureBase: failures of attempts that began before the cut are
// the same congestion) and grows it on successes; a window back to the
// claimer's capacity is dropped.
func (g *Gate) adjustWindowLocked(l *ledger, name string, rs []groupResult) {
	w := l.window[name]
	local := g.cfg.Clock.Now()
	for _, r := range rs {
		switch {
		case r.resource:
			if w == nil {
				w = &window{size: float64(max(l.running[name], 2))}
				l.window[name] = w
			}
			if local.Sub(w.cut) > g.cfg.Protection.PressureBase {
				w.size, w.cut = max(w.size/2, 1), local
			}
		case r.ok && w != nil:
			w.size += 1 / w.size
			if w.size >= float64(max(l.capacity, 1)) {
				delete(l.window, name)
				w = nil
			}
		}
	}
}
