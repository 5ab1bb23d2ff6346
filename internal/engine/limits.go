package engine

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// limits is the engine's side of the queues' and tenants' limits of
// running attempts, which the store keeps for the fleet. The engine reads
// them at start and at every heartbeat; after each claim it counts the
// running attempts of the limited queues and tenants it claimed tasks of,
// gives back what passes a limit, and leaves a queue or tenant at its
// limit out of its claims for limitWait.
type limits struct {
	mu   sync.Mutex
	max  map[store.Scope]map[string]int
	full map[store.Scope]map[string]time.Time
	// freed counts, per queue or tenant left out as full, the attempts of
	// it this worker has ended since: the claim loop claims that many of
	// its tasks at once, rather than waiting out limitWait.
	freed map[store.Scope]map[string]int
}

var scopes = [...]store.Scope{store.ScopeQueue, store.ScopeTenant}

func scopeOf(t task.Task, s store.Scope) string {
	if s == store.ScopeQueue {
		return t.Queue
	}
	return t.Tenant
}

// refreshLimits reads the limits from the store.
func (e *Engine) refreshLimits(ctx context.Context) {
	l, ok := e.cfg.Store.(store.Limiter)
	if !ok {
		return
	}
	ls, err := l.Limits(ctx)
	if err != nil {
		e.cfg.Logger.Warn("could not read the queues' and tenants' limits; keeping the last known", "err", err)
		return
	}
	max := map[store.Scope]map[string]int{}
	for _, l := range ls {
		if max[l.Scope] == nil {
			max[l.Scope] = map[string]int{}
		}
		max[l.Scope][l.Name] = l.Max
	}
	e.lim.mu.Lock()
	e.lim.max = max
	e.lim.mu.Unlock()
}

// skipped are the queues or tenants at their limit just now, which the
// claim loop leaves alone.
func (e *Engine) skipped(s store.Scope) []string {
	e.lim.mu.Lock()
	defer e.lim.mu.Unlock()
	var out []string
	now := time.Now()
	for name, until := range e.lim.full[s] {
		if now.Before(until) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// limited returns the tasks of kept that may run under the queues' and
// tenants' limits, and gives the others back. refused are the claimed
// tasks given back already (by the groups' budgets and limits): they are
// running still, as far as the store knows, and are not counted.
func (e *Engine) limited(kept, refused []task.Task) []task.Task {
	if e.noLimits() {
		return kept
	}
	l, ok := e.cfg.Store.(store.Limiter)
	if !ok || len(kept) == 0 {
		return kept
	}
	e.lim.mu.Lock()
	max := e.lim.max
	e.lim.mu.Unlock()
	over, full, err := OverLimits(e.runCtx, l, kept, refused, max)
	if err != nil {
		e.cfg.Logger.Warn("could not count running attempts for the limits; going on", "err", err)
	}
	for _, f := range full {
		e.markFull(f.Scope, f.Name)
	}
	if len(over) == 0 {
		return kept
	}
	out := kept[:0:0]
	for _, t := range kept {
		if msg := over[t.ID]; msg != "" {
			e.giveBack(t, limitWait, msg)
			continue
		}
		out = append(out, t)
	}
	return out
}

func (e *Engine) noLimits() bool {
	e.lim.mu.Lock()
	defer e.lim.mu.Unlock()
	return len(e.lim.max) == 0
}

func (e *Engine) markFull(s store.Scope, name string) {
	e.lim.mu.Lock()
	defer e.lim.mu.Unlock()
	if e.lim.full == nil {
		e.lim.full = map[store.Scope]map[string]time.Time{}
	}
	if e.lim.full[s] == nil {
		e.lim.full[s] = map[string]time.Time{}
	}
	e.lim.full[s][name] = time.Now().Add(limitWait)
}

// limitFreed records the end of an attempt of t: if its queue, tenant or
// group was left out as full, one of its places is free again.
func (e *Engine) limitFreed(t task.Task) {
	groupFull := false
	if t.Group != "" {
		e.br.mu.Lock()
		groupFull = time.Now().Before(e.br.full[t.Group])
		e.br.mu.Unlock()
	}
	e.lim.mu.Lock()
	defer e.lim.mu.Unlock()
	woke := false
	now := time.Now()
	for _, s := range [...]store.Scope{store.ScopeQueue, store.ScopeTenant, store.ScopeGroup} {
		var n string
		switch s {
		case store.ScopeGroup:
			if n = t.Group; !groupFull {
				continue
			}
		default:
			n = scopeOf(t, s)
			until, full := e.lim.full[s][n]
			if !full || !now.Before(until) {
				delete(e.lim.full[s], n)
				continue
			}
		}
		if e.lim.freed == nil {
			e.lim.freed = map[store.Scope]map[string]int{}
		}
		if e.lim.freed[s] == nil {
			e.lim.freed[s] = map[string]int{}
		}
		e.lim.freed[s][n]++
		woke = true
	}
	if woke {
		e.Wake()
	}
}

// onlyFull tells whether a group is left out for its limit alone: its
// breaker is closed and not ramping, and no pressure holds it back.
func (e *Engine) onlyFull(g string) bool {
	now := e.storeNow()
	e.br.mu.Lock()
	defer e.br.mu.Unlock()
	gr := e.br.groups[g]
	c := gr.Circuit
	return !now.Before(gr.Pressure.Until) && (c.State == "" || c.State == breaker.Closed) && e.settings(gr).Share(c, now) >= 1 && e.br.window[g] == nil
}

// claimFreed claims, for each full queue, tenant or group that this worker's own
// attempts have left since, as many of its tasks as places were freed,
// and returns how many it launched.
func (e *Engine) claimFreed(free int) int {
	e.lim.mu.Lock()
	freed := e.lim.freed
	e.lim.freed = nil
	e.lim.mu.Unlock()
	launched := 0
	for _, s := range [...]store.Scope{store.ScopeQueue, store.ScopeTenant, store.ScopeGroup} {
		for _, n := range slices.Sorted(maps.Keys(freed[s])) {
			if launched == free {
				return launched
			}
			req := e.request(min(freed[s][n], free-launched))
			switch s {
			case store.ScopeQueue:
				if len(req.Queues) > 0 && !slices.Contains(req.Queues, n) {
					continue
				}
				req.Queues, req.SkipQueues = []string{n}, slices.DeleteFunc(req.SkipQueues, func(q string) bool { return q == n })
			case store.ScopeTenant:
				req.Tenant, req.SkipTenants = n, slices.DeleteFunc(req.SkipTenants, func(q string) bool { return q == n })
			case store.ScopeGroup:
				if slices.Contains(req.SkipGroups, n) && !e.onlyFull(n) {
					continue // held back by its breaker or pressure, not its limit
				}
				req.Group, req.SkipGroups = n, slices.DeleteFunc(req.SkipGroups, func(g string) bool { return g == n })
			}
			ts, err := e.cfg.Store.Claim(e.runCtx, req)
			if err != nil {
				e.cfg.Logger.Warn("could not claim the tasks of a queue or tenant below its limit again", "scope", s, "name", n, "err", err)
				continue
			}
			for _, t := range e.limited(e.budgeted(ts)) {
				e.launch(t)
				launched++
			}
		}
	}
	return launched
}
