package gate

import (
	"slices"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/store"
)

// Request is a claimer's ask.
type Request struct {
	// ClaimRequest names the claimer (Worker), what it works (Queues,
	// Kinds, Run) and its lease; Limit is how many tasks it can take now.
	store.ClaimRequest
	// Capacity is how many attempts the claimer runs at most, busy slots
	// and free: a group's share of it is what the ramp after its breaker
	// closes lets run. 0 means what it runs now plus Limit (a remote
	// worker, which asks for what it has room for).
	Capacity int
}

// Skips returns req outside what the gate holds back for its claimer now:
// the groups whose breaker is open or half-open (but for those that fail
// fast), held back by resource pressure, at their limit, or whose share
// of the claimer's slots is taken (the ramp after closing, the window
// under pressure); and the queues and tenants at their limit.
// ok is false when everything req asks for is paused: there is nothing
// to claim, nor to wait for.
func (g *Gate) Skips(req Request) (_ store.ClaimRequest, ok bool) {
	g.setCapacity(req)
	if g.allPaused(req.ClaimRequest) {
		return req.ClaimRequest, false
	}
	return g.skips(req.ClaimRequest), true
}

// setCapacity records the claimer's capacity as req says it.
func (g *Gate) setCapacity(req Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	l := g.ledgerLocked(req.Worker, g.cfg.Clock.Now())
	l.capacity = req.Capacity
	if l.capacity <= 0 {
		l.capacity = len(l.held) + req.Limit
	}
}

func (g *Gate) skips(req store.ClaimRequest) store.ClaimRequest {
	now, local := g.StoreNow(), g.cfg.Clock.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.skipsLocked(g.ledgerLocked(req.Worker, local), req, now, local)
}

func (g *Gate) skipsLocked(l *ledger, req store.ClaimRequest, now, local time.Time) store.ClaimRequest {
	req.SkipGroups, req.SkipQueues, req.SkipTenants = nil, nil, nil
	for name, gr := range g.groups {
		if g.holdsLocked(l, name, gr, now) {
			req.SkipGroups = append(req.SkipGroups, name)
		}
	}
	for f, until := range g.full {
		if !local.Before(until) {
			delete(g.full, f)
			continue
		}
		switch f.Scope {
		case store.ScopeQueue:
			req.SkipQueues = append(req.SkipQueues, f.Name)
		case store.ScopeTenant:
			req.SkipTenants = append(req.SkipTenants, f.Name)
		case store.ScopeGroup:
			if !slices.Contains(req.SkipGroups, f.Name) {
				req.SkipGroups = append(req.SkipGroups, f.Name)
			}
		}
	}
	// A limit that the claimer's own attempts fill is full whatever the
	// others run, however long ago it was last found so.
	for _, s := range scopes {
		if len(g.max[s]) == 0 {
			continue
		}
		own := map[string]int{}
		for _, t := range l.held {
			if n := t.scope(s); g.max[s][n] > 0 {
				own[n]++
			}
		}
		for n, k := range own {
			if k < g.max[s][n] {
				continue
			}
			if s == store.ScopeQueue && !slices.Contains(req.SkipQueues, n) {
				req.SkipQueues = append(req.SkipQueues, n)
			} else if s == store.ScopeTenant && !slices.Contains(req.SkipTenants, n) {
				req.SkipTenants = append(req.SkipTenants, n)
			}
		}
	}
	for name, k := range l.running {
		if lim := g.groups[name].Limit; lim > 0 && k >= lim && !slices.Contains(req.SkipGroups, name) {
			req.SkipGroups = append(req.SkipGroups, name)
		}
	}
	req = g.skipPausedLocked(req)
	for _, s := range [][]string{req.SkipGroups, req.SkipQueues, req.SkipTenants} {
		slices.Sort(s)
	}
	return req
}

// holdsLocked tells whether the claimer of l leaves a group's tasks alone
// now: the group's resource pressure holds it back; its window under
// pressure is full; or its breaker is open or half-open (only probes go;
// but while an open breaker cools down, a group that fails fast has its
// tasks taken, to fail them at once). A group ramping up after its breaker
// closed is claimed, and its ramp passes what it claimed (ramp).
func (g *Gate) holdsLocked(l *ledger, name string, gr store.Group, now time.Time) bool {
	if now.Before(gr.Pressure.Until) || g.cfg.Clock.Now().Before(g.pressed[name]) {
		return true
	}
	if w := l.window[name]; w != nil && l.running[name] >= max(1, int(w.size)) {
		return true
	}
	switch gr.Circuit.State {
	case breaker.Open, breaker.HalfOpen:
		return !FailsFast(gr, now)
	}
	return false
}

// onlyFullLocked tells whether a group is left out for its limit alone:
// nothing else holds it back for l's claimer.
func (g *Gate) onlyFullLocked(l *ledger, name string, now time.Time) bool {
	return !g.holdsLocked(l, name, g.groups[name], now)
}

// UntilProbe is how long until a group held back may go again: an open
// breaker may let a probe through, or a group's pressure eases (0: now;
// false: none is held back).
func (g *Gate) UntilProbe() (time.Duration, bool) {
	now := g.StoreNow()
	g.mu.Lock()
	defer g.mu.Unlock()
	var next time.Duration
	found := false
	for _, gr := range g.groups {
		c := gr.Circuit
		var d time.Duration
		switch {
		case now.Before(gr.Pressure.Until):
			d = gr.Pressure.Until.Sub(now)
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
