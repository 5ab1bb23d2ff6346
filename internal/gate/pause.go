package gate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
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

// A pause also holds back what was claimed before it and has not begun:
// each claimer asks PausedBack at the moment it starts an attempt (the
// engine's executor, the API server as it hands a claim to a remote
// worker), against the pauses the gate knows, which FollowPauses keeps
// current as the store announces them. That costs no store query: the
// claims themselves read the pauses (the drivers leave paused tasks out),
// so a claim made after a pause committed takes none of its tasks, and
// PausedBack catches those claimed just before.

// PausedBack is the Finish that gives t back unstarted, and true, when
// its queue, kind or tenant is paused: it waits where it was (READY, or
// RETRYING for a retry), its attempt given back and counted as a wait,
// with no attempt row.
func (g *Gate) PausedBack(t task.Task, worker string, now time.Time) (store.Finish, bool) {
	g.mu.Lock()
	scope, name := g.pausedTaskLocked(t)
	g.mu.Unlock()
	if scope == "" {
		return store.Finish{}, false
	}
	f := GiveBack(t, worker, now, 0, fmt.Sprintf("%s %s is paused: given back unstarted", scope, name))
	f.Attempt.Decision = "paused"
	if t.Attempt <= 1 {
		f.State = task.Ready
	}
	return f, true
}

// SplitPaused keeps the tasks of ts that are not paused and gives back
// the others (PausedBack).
func (g *Gate) SplitPaused(ts []task.Task, worker string, now time.Time) (kept []task.Task, back []Back) {
	kept = ts[:0:0]
	for _, t := range ts {
		if f, paused := g.PausedBack(t, worker, now); paused {
			back = append(back, Back{t, f})
			continue
		}
		kept = append(kept, t)
	}
	return kept, back
}

// pausedTaskLocked names the paused scope of t ("" when none is).
func (g *Gate) pausedTaskLocked(t task.Task) (store.Scope, string) {
	switch {
	case g.paused[store.ScopeQueue][t.Queue]:
		return store.ScopeQueue, t.Queue
	case g.paused[store.ScopeKind][t.Kind]:
		return store.ScopeKind, t.Kind
	case g.paused[store.ScopeTenant][t.Tenant]:
		return store.ScopeTenant, t.Tenant
	}
	return "", ""
}

// followBackoff spaces the attempts to listen for pauses again.
var followBackoff = retry.Exponential{Min: 50 * time.Millisecond, Max: 5 * time.Second}

// FollowPauses reads the pauses again each time the store announces a
// pause or a resume (a store.PauseWatcher), until ctx ends; a claimer runs
// it beside its claims. Without a watcher it returns at once: the pauses
// are read at every Refresh. started is closed once the first watch
// listens or fails, so that a claimer may wait for it before it claims.
func (g *Gate) FollowPauses(ctx context.Context, started chan<- struct{}) {
	w, ok := g.cfg.Store.(store.PauseWatcher)
	if !ok {
		if started != nil {
			close(started)
		}
		return
	}
	for n := 1; ctx.Err() == nil; n++ {
		ch, err := w.WatchPauses(ctx)
		if started != nil {
			close(started)
			started = nil
		}
		if errors.Is(err, store.ErrNoNotifications) {
			return // claims read the pauses, and heartbeats refresh them
		}
		if err != nil {
			g.cfg.Logger.Debug("the store's pause notifications are unavailable; heartbeats will find pauses", "err", err, "failures", n)
			t := g.cfg.Clock.NewTimer(followBackoff.Delay(n, 0, retry.DefaultRand))
			select {
			case <-t.C():
			case <-ctx.Done():
			}
			t.Stop()
			continue
		}
		g.refreshPauses(ctx) // those made before it listened
		for range ch {
			g.refreshPauses(ctx)
		}
		n = 0
	}
}

// refreshPauses reads the pauses alone and wakes the claimer: a resumed
// queue's tasks are due at once.
func (g *Gate) refreshPauses(ctx context.Context) {
	p, ok := g.cfg.Store.(store.Pauser)
	if !ok {
		return
	}
	ps, err := p.Pauses(ctx)
	if err != nil {
		if ctx.Err() == nil {
			g.cfg.Logger.Warn("could not read the pauses; the next heartbeat will", "err", err)
		}
		return
	}
	g.mu.Lock()
	g.paused = pausesOf(ps)
	g.mu.Unlock()
	g.changed()
}
