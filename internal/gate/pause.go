package gate

import (
	"slices"

	"github.com/grit-run/grit/store"
)

// Pauses stop the claims of a queue's, a kind's or a tenant's tasks
// fleet-wide: the gate reads them with the groups and limits (Refresh, at
// every heartbeat), and every claim path builds its request through
// skips, which leaves the paused queues and tenants out and takes the
// paused kinds off the kinds asked for. (Every claimer names its kinds:
// a Go worker its handlers', a remote worker those it asks for, which the
// API requires.)

// pausedSet is the pauses by scope and name.
type pausedSet map[store.Scope]map[string]bool

func pausesOf(ps []store.Pause) pausedSet {
	out := pausedSet{}
	for _, p := range ps {
		if out[p.Scope] == nil {
			out[p.Scope] = map[string]bool{}
		}
		out[p.Scope][p.Name] = true
	}
	return out
}

// skipPausedLocked leaves the paused queues, tenants and kinds out of req.
func (g *Gate) skipPausedLocked(req store.ClaimRequest) store.ClaimRequest {
	for _, q := range sortedKeys(g.paused[store.ScopeQueue]) {
		if !slices.Contains(req.SkipQueues, q) {
			req.SkipQueues = append(req.SkipQueues, q)
		}
	}
	for _, n := range sortedKeys(g.paused[store.ScopeTenant]) {
		if !slices.Contains(req.SkipTenants, n) {
			req.SkipTenants = append(req.SkipTenants, n)
		}
	}
	if len(req.Kinds) > 0 && len(g.paused[store.ScopeKind]) > 0 {
		req.Kinds = slices.DeleteFunc(slices.Clone(req.Kinds), func(k string) bool { return g.paused[store.ScopeKind][k] })
	}
	return req
}

// allPaused reports whether every kind a claim asks for is paused, or
// its only queue or tenant is: it has nothing to claim. (An empty list of
// kinds would ask for any kind.)
func (g *Gate) allPaused(req store.ClaimRequest) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(req.Kinds) > 0 && !slices.ContainsFunc(req.Kinds, func(k string) bool { return !g.paused[store.ScopeKind][k] }) {
		return true
	}
	if len(req.Queues) > 0 && !slices.ContainsFunc(req.Queues, func(q string) bool { return !g.paused[store.ScopeQueue][q] }) {
		return true
	}
	return req.Tenant != "" && g.paused[store.ScopeTenant][req.Tenant]
}

// pausedLocked reports whether f's queue, tenant is paused (a freed place
// of a paused queue or tenant is not claimed again).
func (g *Gate) pausedLocked(scope store.Scope, name string) bool { return g.paused[scope][name] }

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
