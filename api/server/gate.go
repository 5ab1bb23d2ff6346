package server

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/decide"
	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// gate applies the fleet's downstream protection to the server's claims
// for remote workers, as a Go worker applies it to its own (with the
// engine's code): groups whose breaker is open or half-open, or whose
// resource pressure holds them back, are not claimed, except one probe at
// a time as the breaker allows, and a closed breaker ramps up; what is claimed passes the groups' retry
// budgets and limits and the limits per queue and tenant, and what does
// not is given back using no attempt; and each remote result is recorded
// in its group's breaker. The groups and limits are read from the store
// at most once a second.
type gate struct {
	mu     sync.Mutex
	read   time.Time
	groups map[string]store.Group
	max    map[store.Scope]map[string]int
	full   map[engine.Full]time.Time // queues, tenants and groups at their limit, until when
	tried  map[string]time.Time      // when a probe of a group was last sought
	probes map[int64]bool            // tasks claimed as their group's probe
}

func newGate() gate {
	return gate{full: map[engine.Full]time.Time{}, tried: map[string]time.Time{}, probes: map[int64]bool{}}
}

// gateRefresh is how stale the gate's view of groups and limits may be.
const gateRefresh = time.Second

// refreshGate reads the groups and limits when the last read is stale.
func (s *Server) refreshGate(ctx context.Context) {
	g := &s.gate
	g.mu.Lock()
	stale := time.Since(g.read) >= gateRefresh
	g.mu.Unlock()
	if !stale {
		return
	}
	var groups map[string]store.Group
	if gb, ok := s.cfg.Store.(store.GroupBreakers); ok {
		var err error
		if groups, err = gb.Groups(ctx); err != nil {
			s.cfg.Logger.Warn("could not read the groups' breakers; keeping the last known", "err", err)
			return
		}
	}
	max := map[store.Scope]map[string]int{}
	if l, ok := s.cfg.Store.(store.Limiter); ok {
		ls, err := l.Limits(ctx)
		if err != nil {
			s.cfg.Logger.Warn("could not read the limits; keeping the last known", "err", err)
			return
		}
		for _, l := range ls {
			if max[l.Scope] == nil {
				max[l.Scope] = map[string]int{}
			}
			max[l.Scope][l.Name] = l.Max
		}
	}
	g.mu.Lock()
	g.read, g.groups, g.max = time.Now(), groups, max
	g.mu.Unlock()
}

// gated is req outside what the gate holds back now.
func (s *Server) gated(req store.ClaimRequest, now time.Time) store.ClaimRequest {
	g := &s.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	req.SkipGroups, req.SkipQueues, req.SkipTenants = nil, nil, nil
	for name, gr := range g.groups {
		// A closed breaker ramping up lets a share of the claims take the
		// group's tasks: over the fleet's many claims, about that share of
		// its dispatch.
		// A group that fails fast is claimed while its breaker cools down,
		// for its tasks to fail at once (refuseFailFast).
		fast := engine.FailsFast(gr, now) && !now.Before(gr.Pressure.Until)
		if !fast && (engine.HeldBack(gr, now) || rand.Float64() >= s.settings(gr).Share(gr.Circuit, now)) {
			req.SkipGroups = append(req.SkipGroups, name)
		}
	}
	for f, until := range g.full {
		if !time.Now().Before(until) {
			delete(g.full, f)
			continue
		}
		switch f.Scope {
		case store.ScopeQueue:
			req.SkipQueues = append(req.SkipQueues, f.Name)
		case store.ScopeTenant:
			req.SkipTenants = append(req.SkipTenants, f.Name)
		case store.ScopeGroup:
			req.SkipGroups = append(req.SkipGroups, f.Name)
		}
	}
	for _, l := range [][]string{req.SkipGroups, req.SkipQueues, req.SkipTenants} {
		slices.Sort(l)
	}
	return req
}

func (s *Server) settings(gr store.Group) breaker.Settings {
	if gr.Settings != nil {
		return *gr.Settings
	}
	return s.cfg.Breaker
}

// probe claims, for each group whose breaker lets a probe through now (as
// the store's breaker decides, for the whole fleet), one of its tasks of
// req's kinds as the probe.
func (s *Server) probe(ctx context.Context, req store.ClaimRequest, now time.Time) []task.Task {
	gb, ok := s.cfg.Store.(store.GroupBreakers)
	if !ok {
		return nil
	}
	g := &s.gate
	var due []string
	g.mu.Lock()
	for name, gr := range g.groups {
		c := gr.Circuit
		if (c.State == breaker.HalfOpen || c.State == breaker.Open && !now.Before(c.NextProbe())) && time.Since(g.tried[name]) >= 100*time.Millisecond {
			due = append(due, name)
			g.tried[name] = time.Now()
		}
	}
	g.mu.Unlock()
	slices.Sort(due)
	var out []task.Task
	for _, name := range due {
		if len(out) >= req.Limit {
			break
		}
		var v breaker.Verdict
		if _, err := gb.UpdateGroup(ctx, name, func(gr *store.Group) { v = s.settings(*gr).Allow(&gr.Circuit, now) }); err != nil || !v.Allow || !v.Probe {
			continue
		}
		one := req
		one.Group, one.Limit, one.SkipGroups = name, 1, nil
		ts, err := s.cfg.Store.Claim(ctx, one)
		if err != nil || len(ts) == 0 {
			gb.UpdateGroup(ctx, name, func(gr *store.Group) { gr.Circuit.ProbesOut = max(gr.Circuit.ProbesOut-1, 0) })
			continue
		}
		g.mu.Lock()
		g.probes[ts[0].ID] = true
		g.mu.Unlock()
		s.cfg.Logger.Info("a remote worker probes a group's downstream", "group", name, "task", ts[0].ID, "worker", req.Worker)
		out = append(out, ts...)
	}
	return out
}

// refuseFailFast fails at once, for good, the claimed tasks of the groups
// that fail fast while their breaker is open and cooling down, as a Go
// worker fails them instead of running them (engine.BreakerRefusal), and
// returns the others.
func (s *Server) refuseFailFast(ctx context.Context, ts []task.Task, now time.Time) []task.Task {
	fast := map[string]bool{}
	s.gate.mu.Lock()
	for name, gr := range s.gate.groups {
		if engine.FailsFast(gr, now) {
			fast[name] = true
		}
	}
	s.gate.mu.Unlock()
	if len(fast) == 0 {
		return ts
	}
	return slices.DeleteFunc(ts, func(t task.Task) bool {
		if t.Group == "" || !fast[t.Group] {
			return false
		}
		f := baseFinish(t)
		f.Attempt.Outcome = task.OutcomeError
		decide.Failure(&f, t, engine.BreakerRefusal(t.Group), s.policy(t, ""), now)
		if _, _, err := s.finish(ctx, t, f); err != nil {
			s.cfg.Logger.Warn("could not fail a task of a group that fails fast; its lease will expire", "task", t.ID, "group", t.Group, "err", err)
		}
		return true
	})
}

// admit returns the claimed tasks that pass the groups' retry budgets and
// limits and the limits per queue and tenant, and gives the others back to
// wait, using no attempt.
func (s *Server) admit(ctx context.Context, worker string, ts []task.Task, now time.Time) []task.Task {
	back := map[int64]store.Finish{}
	s.admitGroups(ctx, worker, ts, now, back)
	var kept, refused []task.Task
	for _, t := range ts {
		if _, ok := back[t.ID]; ok {
			refused = append(refused, t)
		} else {
			kept = append(kept, t)
		}
	}
	if l, ok := s.cfg.Store.(store.Limiter); ok {
		s.gate.mu.Lock()
		max := s.gate.max
		s.gate.mu.Unlock()
		over, full, err := engine.OverLimits(ctx, l, kept, refused, max)
		if err != nil {
			s.cfg.Logger.Warn("could not count running attempts for the limits; going on", "err", err)
		}
		s.markFull(full...)
		for _, t := range kept {
			if msg := over[t.ID]; msg != "" {
				back[t.ID] = engine.GiveBack(t, worker, now, engine.LimitWait, msg)
			}
		}
	}
	if len(back) == 0 {
		return ts
	}
	fs := slices.Collect(maps.Values(back))
	if _, err := s.cfg.Store.Finish(ctx, fs); err != nil {
		s.cfg.Logger.Warn("could not give back claimed tasks; their leases will expire", "tasks", len(fs), "err", err)
	}
	s.gate.mu.Lock()
	for id := range back {
		delete(s.gate.probes, id)
	}
	s.gate.mu.Unlock()
	return slices.DeleteFunc(ts, func(t task.Task) bool { _, ok := back[t.ID]; return ok })
}

func (s *Server) markFull(fs ...engine.Full) {
	s.gate.mu.Lock()
	defer s.gate.mu.Unlock()
	for _, f := range fs {
		s.gate.full[f] = time.Now().Add(engine.LimitWait)
	}
}

// admitGroups passes each group's claimed tasks through its retry budget
// and limit (engine.AdmitGroups) and adds what it refuses to back.
func (s *Server) admitGroups(ctx context.Context, worker string, ts []task.Task, now time.Time, back map[int64]store.Finish) {
	gb, ok := s.cfg.Store.(store.GroupBreakers)
	if !ok {
		return
	}
	refused, groups := engine.AdmitGroups(ctx, gb, ts, now, s.cfg.RetryBudget, s.cfg.BudgetWait)
	for name, a := range groups {
		switch {
		case a.Err != nil:
			s.cfg.Logger.Warn("could not reach the group's retry budget and limit; going on", "group", name, "err", a.Err)
		case a.AtLimit:
			s.markFull(engine.Full{Scope: store.ScopeGroup, Name: name}) // leave it alone a moment
		}
	}
	for _, r := range refused {
		back[r.Task.ID] = engine.GiveBack(r.Task, worker, now, r.Wait, r.Why)
	}
}

// record records a remote attempt's end in its group's breaker and
// pressure, as a Go worker's.
func (s *Server) record(ctx context.Context, t task.Task, f store.Finish) {
	s.gate.mu.Lock()
	probe := s.gate.probes[t.ID]
	delete(s.gate.probes, t.ID)
	s.gate.mu.Unlock()
	gb, ok := s.cfg.Store.(store.GroupBreakers)
	if !ok || t.Group == "" {
		return
	}
	now, err := s.cfg.Store.Now(ctx)
	if err != nil {
		return
	}
	_, err = gb.UpdateGroup(ctx, t.Group, func(gr *store.Group) {
		engine.RecordResult(gr, s.settings(*gr), f, probe, now, s.cfg.PressureBase, s.cfg.PressureMax)
	})
	if err != nil {
		s.cfg.Logger.Warn("could not record a result in the group's breaker", "group", t.Group, "err", err)
	}
}
