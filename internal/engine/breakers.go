package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// breakers is the engine's side of the groups' circuit breakers, which the
// store keeps so that the fleet shares them. The engine reads them at start
// and at every heartbeat, so every worker stops dispatching a group within
// a heartbeat of its breaker opening; it records the results of its
// attempts of each group, and its probes, in the store.
type breakers struct {
	mu      sync.Mutex
	groups  map[string]store.Group // as last read or written
	running map[string]int         // this worker's attempts per group
	tried   map[string]time.Time   // when a probe was last sought
	full    map[string]time.Time   // until when a group at its limit is left alone
	// window is, per group under resource pressure, how many attempts this
	// worker runs at once: halved on resource failures, grown by one per
	// window of successes (additive increase, multiplicative decrease), so
	// that the fleet settles at what the downstream can take.
	window map[string]*window
}

// window is a group's share of this worker's slots under pressure.
type window struct {
	size float64
	cut  time.Time // when it was last halved
}

// groupResult is how an attempt of a group ended, for its breaker.
type groupResult struct {
	ok, probe bool
	breaker   bool // counted by the breaker
	resource  bool // a resource failure: the group's pressure rises
}

func (e *Engine) groupBreakers() (store.GroupBreakers, bool) {
	gb, ok := e.cfg.Store.(store.GroupBreakers)
	return gb, ok
}

// refreshCircuits reads the groups' breakers and wakes the claim loop when
// the groups it skips changed.
func (e *Engine) refreshCircuits(ctx context.Context) {
	gb, ok := e.groupBreakers()
	if !ok {
		return
	}
	gs, err := gb.Groups(ctx)
	if err != nil {
		e.cfg.Logger.Warn("could not read the groups' breakers; keeping the last known", "err", err)
		return
	}
	before := e.openGroups()
	e.br.mu.Lock()
	e.br.groups = gs
	e.br.mu.Unlock()
	if after := e.openGroups(); !slices.Equal(before, after) {
		e.cfg.Logger.Info("groups whose tasks are held back by their breaker", "groups", after)
		e.Wake()
	}
}

func (e *Engine) setGroup(name string, g store.Group) {
	e.br.mu.Lock()
	defer e.br.mu.Unlock()
	if e.br.groups == nil {
		e.br.groups = map[string]store.Group{}
	}
	e.br.groups[name] = g
}

// settings are a group's breaker settings: its own, else the worker's.
func (e *Engine) settings(g store.Group) breaker.Settings {
	if g.Settings != nil {
		return *g.Settings
	}
	return e.cfg.Breaker
}

// failFast tells whether a task of the group fails at once: the group
// says so and its breaker is open, cooling down.
func (e *Engine) failFast(name string) bool {
	now := e.storeNow()
	e.br.mu.Lock()
	defer e.br.mu.Unlock()
	g, ok := e.br.groups[name]
	return ok && FailsFast(g, now)
}

// FailsFast reports whether a group's tasks fail at once at now, whoever
// claims them: the group fails fast and its breaker is open, cooling down.
func FailsFast(g store.Group, now time.Time) bool {
	return g.FailFast && g.Circuit.State == breaker.Open && now.Before(g.Circuit.NextProbe())
}

// openGroups are the groups whose tasks the claim loop does not take: an
// open or half-open breaker (only probes go; but while an open breaker
// cools down, a group that fails fast has its tasks taken, to fail them at
// once), or a closed one ramping up whose share of this worker's slots is
// taken.
func (e *Engine) openGroups() []string {
	now := e.storeNow()
	e.br.mu.Lock()
	defer e.br.mu.Unlock()
	var out []string
	for g, gr := range e.br.groups {
		c := gr.Circuit
		if now.Before(gr.Pressure.Until) {
			out = append(out, g) // held back by resource pressure
			continue
		}
		if time.Now().Before(e.br.full[g]) {
			out = append(out, g) // at its limit across the fleet, just now
			continue
		}
		if w := e.br.window[g]; w != nil && e.br.running[g] >= max(1, int(w.size)) {
			out = append(out, g) // its window under pressure is full
			continue
		}
		switch c.State {
		case breaker.Open, breaker.HalfOpen:
			if !FailsFast(gr, now) {
				out = append(out, g)
			}
		case breaker.Closed:
			share := e.settings(gr).Share(c, now)
			if share < 1 && e.br.running[g] >= max(1, int(math.Ceil(share*float64(e.cfg.Concurrency)))) {
				out = append(out, g)
			}
		}
	}
	slices.Sort(out)
	return out
}

// untilProbe is how long until a group this worker holds back may go again:
// an open breaker may let a probe through, or a group's pressure eases (0:
// now; false: none is held back).
func (e *Engine) untilProbe() (time.Duration, bool) {
	now := e.storeNow()
	e.br.mu.Lock()
	defer e.br.mu.Unlock()
	var next time.Duration
	found := false
	for _, g := range e.br.groups {
		c := g.Circuit
		var d time.Duration
		switch {
		case now.Before(g.Pressure.Until):
			d = g.Pressure.Until.Sub(now)
		case c.State == breaker.Open:
			d = max(c.NextProbe().Sub(now), 0)
		case c.State == breaker.HalfOpen:
			d = probeRetry
		default:
			continue
		}
		if !found || d < next {
			next, found = d, true
		}
	}
	return next, found
}

// probeRetry spaces one worker's attempts to take a probe of a group.
const probeRetry = 100 * time.Millisecond

// probe launches, for each group whose breaker may let a probe through, one
// of its tasks as a probe: the store's breaker decides, so that the fleet
// sends no more probes than it allows. It returns how many it launched.
func (e *Engine) probe(free int) int {
	gb, ok := e.groupBreakers()
	if !ok || free == 0 {
		return 0
	}
	now := e.storeNow()
	var groups []string
	e.br.mu.Lock()
	for g, gr := range e.br.groups {
		c := gr.Circuit
		due := c.State == breaker.HalfOpen || c.State == breaker.Open && !now.Before(c.NextProbe())
		if due && now.Sub(e.br.tried[g]) >= probeRetry {
			groups = append(groups, g)
			e.br.tried[g] = now
		}
	}
	e.br.mu.Unlock()
	launched := 0
	for _, g := range groups {
		if launched == free {
			break
		}
		if e.probeGroup(gb, g) {
			launched++
		}
	}
	return launched
}

// probeGroup asks the store's breaker for a probe of g and, if it grants
// one, claims a task of g to be it (giving the probe back if none is due).
func (e *Engine) probeGroup(gb store.GroupBreakers, g string) bool {
	var v breaker.Verdict
	gr, err := gb.UpdateGroup(e.runCtx, g, func(gr *store.Group) { v = e.settings(*gr).Allow(&gr.Circuit, e.storeNow()) })
	if err != nil {
		e.cfg.Logger.Warn("could not ask the group's breaker for a probe", "group", g, "err", err)
		return false
	}
	e.setGroup(g, gr)
	if !v.Allow || !v.Probe {
		return false
	}
	req := e.request(1)
	req.SkipGroups, req.Group = nil, g
	ts, err := e.cfg.Store.Claim(e.runCtx, req)
	if err == nil && len(ts) == 1 {
		e.cfg.Logger.Info("probing a group's downstream", "group", g, "task", ts[0].ID)
		e.launchAs(ts[0], true)
		return true
	}
	gr, uerr := gb.UpdateGroup(e.runCtx, g, func(gr *store.Group) { gr.Circuit.ProbesOut = max(gr.Circuit.ProbesOut-1, 0) })
	if uerr == nil {
		e.setGroup(g, gr)
	}
	return false
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
	}
	return r, true
}

// recordGroups records the results of a batch's attempts in their groups'
// breakers, one locked update per group.
func (e *Engine) recordGroups(results map[string][]groupResult) {
	gb, ok := e.groupBreakers()
	if !ok {
		return
	}
	for _, g := range slices.Sorted(maps.Keys(results)) {
		rs := results[g]
		gr, err := gb.UpdateGroup(e.completeCtx, g, func(gr *store.Group) {
			now, s := e.storeNow(), e.settings(*gr)
			for _, r := range rs {
				r.apply(gr, s, now, e.cfg.PressureBase, e.cfg.PressureMax)
			}
		})
		if err != nil {
			e.cfg.Logger.Warn("could not record results in the group's breaker", "group", g, "err", err)
			continue
		}
		e.adjustWindow(g, rs)
		c := gr.Circuit
		before := e.circuitState(g)
		e.setGroup(g, gr)
		if e.circuitState(g) != before {
			e.cfg.Logger.Info("group breaker", "group", g, "state", c.State, "next_probe", c.NextProbe())
			e.Wake()
		}
	}
}

func (e *Engine) circuitState(g string) breaker.State {
	e.br.mu.Lock()
	defer e.br.mu.Unlock()
	if s := e.br.groups[g].Circuit.State; s != "" {
		return s
	}
	return breaker.Closed
}

func (e *Engine) groupStarted(g string, delta int) {
	if g == "" {
		return
	}
	e.br.mu.Lock()
	e.br.running[g] += delta
	e.br.mu.Unlock()
}

// ErrBreakerOpen fails, at once and for good, the tasks of a group that
// fails fast while its breaker is open.
var ErrBreakerOpen = errors.New("engine: the group's circuit breaker is open")

// breakerRefuses is the permanent error a task of a fail-fast group gets
// instead of running while its breaker is open, or nil.
func (e *Engine) breakerRefuses(t *task.Task) error {
	if t.Group == "" || !e.failFast(t.Group) {
		return nil
	}
	return BreakerRefusal(t.Group)
}

// BreakerRefusal is the permanent error a task of group gets while the
// group fails fast.
func BreakerRefusal(group string) error {
	return retry.Permanent(fmt.Errorf("group %s: %w (the group fails fast)", group, ErrBreakerOpen))
}

// adjustWindow halves a group's window on resource failures (once per
// PressureBase: failures of attempts that began before the cut are the
// same congestion) and grows it on successes; a window back to the
// worker's concurrency is dropped.
func (e *Engine) adjustWindow(g string, rs []groupResult) {
	e.br.mu.Lock()
	defer e.br.mu.Unlock()
	w := e.br.window[g]
	for _, r := range rs {
		switch {
		case r.resource:
			if w == nil {
				w = &window{size: float64(max(e.br.running[g], 2))}
				e.br.window[g] = w
			}
			if time.Since(w.cut) > e.cfg.PressureBase {
				w.size, w.cut = max(w.size/2, 1), time.Now()
			}
		case r.ok && w != nil:
			w.size += 1 / w.size
			if w.size >= float64(e.cfg.Concurrency) {
				delete(e.br.window, g)
				w = nil
			}
		}
	}
}

// budgeted returns the claimed tasks that may run: for each group, its
// first attempts deposit in the group's retry budget (in the store, shared
// by the fleet) and its retries take from it; a retry that finds no token
// is given back to wait BudgetWait, using no attempt. It returns the tasks
// it kept and those it gave back.
func (e *Engine) budgeted(ts []task.Task) (kept, refused []task.Task) {
	gb, ok := e.groupBreakers()
	if !ok {
		return ts, nil
	}
	back, groups := AdmitGroups(e.runCtx, gb, ts, e.storeNow(), e.cfg.RetryBudget, e.cfg.BudgetWait)
	for g, a := range groups {
		if a.Err != nil {
			e.cfg.Logger.Warn("could not reach the group's retry budget and limit; going on", "group", g, "err", a.Err)
			continue
		}
		e.setGroup(g, a.Group)
		if a.AtLimit {
			e.br.mu.Lock()
			e.br.full[g] = time.Now().Add(limitWait)
			e.br.mu.Unlock()
		}
	}
	if len(back) == 0 {
		return ts, nil
	}
	gone := make(map[int64]bool, len(back))
	for _, r := range back {
		gone[r.Task.ID] = true
		refused = append(refused, r.Task)
		e.giveBack(r.Task, r.Wait, r.Why)
	}
	kept = slices.DeleteFunc(slices.Clone(ts), func(t task.Task) bool { return gone[t.ID] })
	return kept, refused
}

// limitWait is how long a task given back at its group's limit waits,
// and how long this worker then leaves the group alone.
const limitWait = LimitWait

// giveBack gives a claimed task back to wait, without using an attempt:
// its group's retry budget is spent, or the group is at its limit.
func (e *Engine) giveBack(t task.Task, wait time.Duration, msg string) {
	f := GiveBack(t, e.cfg.WorkerID, e.storeNow(), wait, msg)
	e.stats.BudgetDeferred.Add(1)
	e.groupStarted(t.Group, 1) // forget, once it is recorded, counts it out
	e.finishes <- pending{a: &attempt{t: t, cancel: func(error) {}, back: true}, f: f}
}
