package gate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// KindHold is the prefix of the name under which the store's groups hold
// a kind whose tasks have no group as an outage: "kind:" and the kind.
// Group names may not start with it.
const KindHold = store.KindHold

// HoldOf is the name an outage of t's failure holds: its group, or its
// kind under KindHold.
func HoldOf(t task.Task) string {
	if t.Group != "" {
		return t.Group
	}
	return KindHold + t.Kind
}

// judge tells an outage from poison, and from a retry's own bad luck. A
// failure decided DEAD_LETTER as poison, or retried after an unclassified
// or transient error, is an outage when Protection.OutageTasks distinct
// tasks of its group (else its kind) failed with its fingerprint within
// OutageWindow and none of them succeeded (for a group: its breaker
// counted no success). Then f becomes a retry at the hold's next probe,
// decided "outage", and the group or kind is held as an open breaker holds
// a group: its tasks wait, using no attempt, and a probe at a time goes
// until one succeeds. Judging retries too holds an outage after the first
// failures of a few tasks, before the others spend their retries on it. A
// store that cannot tell (failing) leaves the decision as it was. A retry
// that was not an outage is not asked about again, for its hold and
// fingerprint, for judgeEvery: a flaky downstream's failures cost a query
// a tenth of a second at most.
func (g *Gate) judge(ctx context.Context, t *task.Task, f *store.Finish) {
	p := g.cfg.Protection
	if p.OutageTasks < 0 {
		return
	}
	poison := f.State == task.DeadLetter && f.Attempt.Decision == retry.ReasonPoison.String()
	retried := f.State == task.Retrying && f.Attempt.Decision == retry.ReasonRetry.String() &&
		(f.Attempt.Class == retry.Unclassified.String() || f.Attempt.Class == retry.ClassTransient.String())
	if !poison && !retried {
		return
	}
	sp := g.cfg.Store
	now, name := g.StoreNow(), HoldOf(*t)
	key := name + "\x00" + f.Fingerprint
	g.mu.Lock()
	// Known: judged so lately, or held for this very failure now (a probe
	// that failed again after a cool-down longer than the window).
	known := now.Before(g.outages[key])
	if h, ok := g.groups[name]; ok && h.Outage != nil && h.Outage.Fingerprint == f.Fingerprint && orClosed(h.Circuit.State) != breaker.Closed {
		known = true
	}
	if !known && retried && now.Before(g.notOutages[key]) {
		g.mu.Unlock()
		return
	}
	gr, hasGroup := g.groups[t.Group]
	g.mu.Unlock()
	tasks := 0 // not counted again while the outage is known
	if !known {
		q := store.SpreadQuery{Kind: t.Kind, Group: t.Group, Fingerprint: f.Fingerprint,
			Since: now.Add(-p.OutageWindow), Limit: p.OutageTasks, Succeeded: t.Group == ""}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		sp, err := sp.Spread(qctx, q)
		cancel()
		if err != nil {
			g.cfg.Logger.Warn("could not tell an outage from poison; dead-lettering as poison", "task", t.ID, "err", err)
			return
		}
		if t.Group != "" && hasGroup {
			failures, attempts := p.Settings(gr).Counts(gr.Circuit, now)
			sp.Succeeded = attempts > failures
		}
		if sp.Tasks < p.OutageTasks || sp.Succeeded {
			// One task's own failure, or others of its kind do succeed:
			// poison, or a retry.
			g.mu.Lock()
			if len(g.notOutages) >= 1000 {
				maps.DeleteFunc(g.notOutages, func(_ string, until time.Time) bool { return !now.Before(until) })
			}
			g.notOutages[key] = now.Add(judgeEvery)
			g.mu.Unlock()
			return
		}
		tasks = sp.Tasks
	}
	g.holdOutage(ctx, name, t, f, tasks, now)
}

// judgeEvery is how long a retry that was not an outage keeps others of
// its hold and fingerprint from being asked about.
const judgeEvery = 100 * time.Millisecond

// holdOutage holds name (a group, or a kind under KindHold) as an outage of f's
// failure, and makes f a retry at its next probe.
func (g *Gate) holdOutage(ctx context.Context, name string, t *task.Task, f *store.Finish, tasks int, now time.Time) {
	p := g.cfg.Protection
	tripped, declared := false, false
	gr, err := g.gb.UpdateGroup(ctx, name, func(gr *store.Group) {
		tripped, declared = false, false // the update may run again
		if gr.Circuit.State == "" || gr.Circuit.State == breaker.Closed {
			p.Settings(*gr).Trip(&gr.Circuit, now, 0)
			tripped = true
		}
		if gr.Outage == nil {
			gr.Outage = &store.Outage{Fingerprint: f.Fingerprint, Error: clip(f.Error, 500), Kind: t.Kind, Since: now}
			declared = true
		}
	})
	if err != nil {
		g.cfg.Logger.Warn("could not hold an outage; dead-lettering as poison", "hold", name, "task", t.ID, "err", err)
		return
	}
	g.setGroup(name, gr)
	g.mu.Lock()
	g.outages[name+"\x00"+f.Fingerprint] = now.Add(p.OutageWindow)
	g.mu.Unlock()
	at := gr.Circuit.NextProbe()
	if at.Before(now) {
		at = now
	}
	f.State, f.NextAt = task.Retrying, at
	f.Attempt.Delay, f.Attempt.Decision = at.Sub(now), "outage"
	if tripped {
		g.changed()
	}
	if declared { // once per hold, by whichever claimer declared it
		g.revive(ctx, t, f, now)
		g.cfg.Logger.Warn("outage: tasks fail alike and none succeeds; holding their work instead of dead-lettering it",
			"hold", name, "fingerprint", f.Fingerprint, "error", clip(f.Error, 200), "next_probe", at)
		o := Outage{Kind: t.Kind, Fingerprint: f.Fingerprint, Error: f.Error, Tasks: tasks, Until: at}
		if t.Group != "" {
			o.Kind, o.Group = "", t.Group
		}
		g.HeldOutage(o)
	}
}

// revive replays the dead letters of the outage just declared: tasks of
// t's kind and group dead-lettered with f's fingerprint within the outage
// window, whose second failure came before the failure had spread far
// enough to be told from poison. They are READY again and wait in the
// hold with the others.
func (g *Gate) revive(ctx context.Context, t *task.Task, f *store.Finish, now time.Time) {
	since := now.Add(-g.cfg.Protection.OutageWindow)
	dead, err := g.cfg.Store.ListTasks(ctx, task.Filter{Kind: t.Kind, States: []task.State{task.DeadLetter}, Limit: 1000})
	if err != nil {
		g.cfg.Logger.Warn("could not look for the outage's dead letters", "kind", t.Kind, "err", err)
		return
	}
	n := 0
	for _, d := range dead {
		if d.Group != t.Group || d.Fingerprint != f.Fingerprint || d.FinishedAt.Before(since) {
			continue
		}
		if _, err := g.cfg.Store.Act(ctx, d.ID, task.ActReplay); err != nil {
			g.cfg.Logger.Warn("could not replay a dead letter of the outage", "task", d.ID, "err", err)
			continue
		}
		n++
	}
	if n > 0 {
		g.cfg.Logger.Info("replayed the dead letters of the outage: they failed before it could be told from poison", "kind", t.Kind, "group", t.Group, "tasks", n)
		g.changed()
	}
}

// countKindHoldsLocked counts again, after the group name changed ("":
// all of them may have), the kinds held as an outage or ramping up after
// one: their attempts' ends are recorded in their hold.
func (g *Gate) countKindHoldsLocked(name string) {
	if name != "" && !strings.HasPrefix(name, KindHold) {
		return
	}
	g.kindHolds = 0
	for name, gr := range g.groups {
		if strings.HasPrefix(name, KindHold) && (orClosed(gr.Circuit.State) != breaker.Closed || gr.Circuit.Ramp != nil) {
			g.kindHolds++
		}
	}
}

// heldKindsLocked are the kinds held as an outage (KindHold groups whose
// circuit is not closed), or nil.
func (g *Gate) heldKindsLocked() map[string]bool {
	var out map[string]bool
	for name, gr := range g.groups {
		if k, ok := strings.CutPrefix(name, KindHold); ok && gr.Circuit.State != "" && gr.Circuit.State != breaker.Closed {
			if out == nil {
				out = map[string]bool{}
			}
			out[k] = true
		}
	}
	return out
}

// refuseHeld gives back the claimed tasks of kinds held as an outage,
// using no attempt, until their hold's next probe, but for as many probes
// as the hold lets through: those are kept and counted as probes.
func (g *Gate) refuseHeld(ctx context.Context, worker string, ts []task.Task, now time.Time) ([]task.Task, []Back) {
	g.mu.Lock()
	var held map[string]bool
	if g.kindHolds > 0 {
		held = g.heldKindsLocked()
	}
	g.mu.Unlock()
	if len(held) == 0 {
		return ts, nil
	}
	byKind := map[string][]task.Task{}
	kept := ts[:0:0]
	for _, t := range ts {
		if t.Group != "" || !held[t.Kind] {
			kept = append(kept, t)
		} else {
			byKind[t.Kind] = append(byKind[t.Kind], t)
		}
	}
	var back []Back
	for _, kind := range slices.Sorted(maps.Keys(byKind)) {
		probes, refused := g.probeHold(ctx, worker, kind, byKind[kind], now)
		kept = append(kept, probes...)
		back = append(back, refused...)
	}
	return kept, back
}

// probeHold asks a held kind's breaker, in one locked update of its
// hold, which of the kind's claimed tasks go as probes (as many as it
// lets through, counted as probes), and gives the others back until the
// next probe: the doubling cool-down keeps that within the longest
// cool-down; while probes are out, for a cool-down (a second): they
// answer soon. Once they close the hold, its ramp lets the kind's tasks
// go.
func (g *Gate) probeHold(ctx context.Context, worker, kind string, ts []task.Task, now time.Time) ([]task.Task, []Back) {
	name := KindHold + kind
	probes, retryAt := 0, now.Add(time.Second)
	gr, err := g.gb.UpdateGroup(ctx, name, func(gr *store.Group) {
		probes, retryAt = 0, now.Add(time.Second) // the update may run again
		s := g.cfg.Protection.Settings(*gr)
		for probes < len(ts) {
			v := s.Allow(&gr.Circuit, now)
			if !v.Allow || !v.Probe {
				if v.Retry.After(now) {
					retryAt = v.Retry
				}
				break
			}
			probes++
		}
	})
	if err != nil {
		g.cfg.Logger.Warn("could not reach an outage's hold; holding its tasks back", "hold", name, "err", err)
		probes = 0
	} else {
		g.setGroup(name, gr)
	}
	g.mu.Lock()
	for _, t := range ts[:probes] {
		g.probes[t.ID] = t.LeaseToken
	}
	g.mu.Unlock()
	wait := min(retryAt.Sub(now), g.cfg.Protection.Settings(gr).WithDefaults().MaxCoolDown)
	var back []Back
	for _, t := range ts[probes:] {
		back = append(back, Back{t, GiveBack(t, worker, now, wait, fmt.Sprintf("kind %s is held as an outage: waiting %v for its next probe", kind, wait.Round(time.Millisecond)))})
	}
	return ts[:probes], back
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
