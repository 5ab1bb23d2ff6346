package gate

import (
	"cmp"
	"context"
	"maps"
	"slices"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Claimed is what a Claim took.
type Claimed struct {
	// Tasks are the claimed tasks to run.
	Tasks []task.Task
	// Back are claimed tasks the gate decided not to run: given back to
	// wait, using no attempt (a retry budget spent, a limit reached), or
	// failed at once (a group that fails fast). The claimer records them
	// (store.Finish), as it records its attempts.
	Back []Back
	// More tells that the claim took all it asked for: more may be due.
	More bool
}

// Back is a claimed task the gate ends without running, and how.
type Back struct {
	Task   task.Task
	Finish store.Finish
}

// Claim claims up to req.Limit tasks for a claimer through the gate: one
// probe for each group whose breaker lets one through now (the store's
// breaker decides, for the fleet), then the tasks of the queues, tenants
// and groups whose places the claimer's ended attempts freed, then the
// rest outside what the gate holds back (Skips). What it claimed, probes
// aside, passes the groups' fail-fast, retry budgets and limits and the
// limits of queues and tenants. A store error ends the claim; the tasks
// claimed before it are returned with it, to run.
func (g *Gate) Claim(ctx context.Context, req Request) (Claimed, error) {
	var c Claimed
	if g.allPaused(req.ClaimRequest) {
		return c, nil
	}
	g.setCapacity(req)
	left := req.Limit
	probes := g.probe(ctx, req, left)
	c.Tasks = append(c.Tasks, probes...)
	left -= len(probes)
	var err error
	if left > 0 {
		// The freed places' tasks pass the gate before the main claim, so
		// that a queue, tenant or group they fill again is left out of it.
		var freed []task.Task
		freed, err = g.claimFreed(ctx, req, left)
		left -= len(freed)
		c.admit(g.admit(ctx, req.Worker, freed))
	}
	if err == nil && left >= 0 {
		var ts []task.Task
		if left > 0 {
			ts, err = g.cfg.Store.Claim(ctx, g.skips(withLimit(req, left)))
		}
		c.More = err == nil && len(ts) == left
		c.admit(g.admit(ctx, req.Worker, ts))
	}
	g.hold(req.Worker, c.Tasks)
	if err != nil {
		g.cfg.Metrics.ClaimFailed()
	}
	if len(c.Tasks) > 0 {
		g.cfg.Metrics.Started(c.Tasks, g.StoreNow())
	}
	return c, err
}

func (c *Claimed) admit(kept []task.Task, back []Back) {
	if len(c.Tasks) == 0 {
		c.Tasks = kept // the claim's own slice: no copy
	} else {
		c.Tasks = append(c.Tasks, kept...)
	}
	c.Back = append(c.Back, back...)
}

func withLimit(req Request, n int) store.ClaimRequest {
	r := req.ClaimRequest
	r.Limit = n
	return r
}

// hold enters tasks in their claimer's ledger.
func (g *Gate) hold(worker string, ts []task.Task) {
	if len(ts) == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	l := g.ledgerLocked(worker, g.cfg.Clock.Now())
	for _, t := range ts {
		l.add(t)
	}
}

// probe claims, for each group whose breaker may let a probe through, one
// of its tasks as the probe, up to n.
func (g *Gate) probe(ctx context.Context, req Request, n int) []task.Task {
	if n <= 0 {
		return nil
	}
	now, local := g.StoreNow(), g.cfg.Clock.Now()
	var due []string
	g.mu.Lock()
	for name, gr := range g.groups {
		c := gr.Circuit
		ready := c.State == breaker.HalfOpen || c.State == breaker.Open && !now.Before(c.NextProbe())
		if ready && local.Sub(g.tried[name]) >= probeRetry {
			due = append(due, name)
			g.tried[name] = local
		}
	}
	g.mu.Unlock()
	slices.Sort(due)
	var out []task.Task
	for _, name := range due {
		if len(out) == n {
			break
		}
		if t, ok := g.probeGroup(ctx, req, name); ok {
			out = append(out, t)
		}
	}
	return out
}

// probeGroup asks the store's breaker for a probe of a group and, if it
// grants one, claims a task of the group to be it (giving the probe back
// if none is due).
func (g *Gate) probeGroup(ctx context.Context, req Request, name string) (task.Task, bool) {
	var v breaker.Verdict
	gr, err := g.gb.UpdateGroup(ctx, name, func(gr *store.Group) {
		v = g.cfg.Protection.Settings(*gr).Allow(&gr.Circuit, g.StoreNow())
	})
	if err != nil {
		g.cfg.Logger.Warn("could not ask the group's breaker for a probe", "group", name, "err", err)
		return task.Task{}, false
	}
	g.setGroup(name, gr)
	if !v.Allow || !v.Probe {
		return task.Task{}, false
	}
	one := g.skips(withLimit(req, 1))
	one.SkipGroups, one.Group = nil, name
	ts, err := g.cfg.Store.Claim(ctx, one)
	if err == nil && len(ts) == 1 {
		g.mu.Lock()
		g.probes[ts[0].ID] = ts[0].LeaseToken
		g.mu.Unlock()
		g.cfg.Logger.Info("probing a group's downstream", "group", name, "task", ts[0].ID, "worker", req.Worker)
		return ts[0], true
	}
	gr, err = g.gb.UpdateGroup(ctx, name, func(gr *store.Group) { gr.Circuit.ProbesOut = max(gr.Circuit.ProbesOut-1, 0) })
	if err != nil {
		g.cfg.Logger.Warn("could not give a probe back to the group's breaker; it returns after a cool-down", "group", name, "err", err)
		return task.Task{}, false
	}
	g.setGroup(name, gr)
	return task.Task{}, false
}

// claimFreed claims, for each full queue, tenant or group that the
// claimer's own attempts have left since, as many of its tasks as places
// were freed, up to n.
func (g *Gate) claimFreed(ctx context.Context, req Request, n int) ([]task.Task, error) {
	now := g.StoreNow()
	g.mu.Lock()
	l := g.ledgerLocked(req.Worker, g.cfg.Clock.Now())
	freed := l.freed
	l.freed = nil
	g.mu.Unlock()
	var out []task.Task
	for _, f := range slices.SortedFunc(maps.Keys(freed), func(a, b Full) int {
		if a.Scope != b.Scope {
			return scopeRank(a.Scope) - scopeRank(b.Scope)
		}
		return cmp.Compare(a.Name, b.Name)
	}) {
		if len(out) == n {
			break
		}
		g.mu.Lock()
		paused := g.pausedLocked(f.Scope, f.Name)
		g.mu.Unlock()
		if paused {
			continue
		}
		one := g.skips(withLimit(req, min(freed[f], n-len(out))))
		drop := func(s string) bool { return s == f.Name }
		switch f.Scope {
		case store.ScopeQueue:
			if len(one.Queues) > 0 && !slices.Contains(one.Queues, f.Name) {
				continue
			}
			one.Queues, one.SkipQueues = []string{f.Name}, slices.DeleteFunc(one.SkipQueues, drop)
		case store.ScopeTenant:
			one.Tenant, one.SkipTenants = f.Name, slices.DeleteFunc(one.SkipTenants, drop)
		case store.ScopeGroup:
			g.mu.Lock()
			only := g.onlyFullLocked(l, f.Name, now)
			g.mu.Unlock()
			if !only {
				continue // held back by its breaker or pressure, not its limit
			}
			one.Group, one.SkipGroups = f.Name, slices.DeleteFunc(one.SkipGroups, drop)
		}
		ts, err := g.cfg.Store.Claim(ctx, one)
		if err != nil {
			return out, err
		}
		out = append(out, ts...)
	}
	return out, nil
}

func scopeRank(s store.Scope) int {
	switch s {
	case store.ScopeQueue:
		return 0
	case store.ScopeTenant:
		return 1
	}
	return 2
}
