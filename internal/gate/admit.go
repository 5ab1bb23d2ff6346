package gate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/grit-run/grit/internal/decide"
	"github.com/grit-run/grit/rate"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// admit returns the claimed tasks that may run, and the others as Back:
// the tasks of a group that fails fast, failed at once; then, per group,
// the retries its budget refuses and the tasks past its limit; then the
// tasks past the limits of their queues and tenants, and then those past
// the rates of their queues, kinds, groups and tenants, given back to
// wait.
func (g *Gate) admit(ctx context.Context, worker string, ts []task.Task) ([]task.Task, []Back) {
	if len(ts) == 0 {
		return ts, nil
	}
	now := g.StoreNow()
	var back, ramped []Back
	ts, back = g.refuseFailFast(ts, now)
	ts, held := g.refuseHeld(ctx, worker, ts, now)
	back = append(back, held...)
	ts, ramped = g.ramp(ctx, worker, ts, now)
	back = append(back, ramped...)
	refused := g.admitGroups(ctx, worker, ts, now)
	back = append(back, refused...)
	kept, given := ts, []task.Task(nil) // most claims give nothing back: no copy
	if len(refused) > 0 {
		gone := make(map[int64]bool, len(refused))
		for _, b := range refused {
			gone[b.Task.ID] = true
		}
		kept = nil
		for _, t := range ts {
			if gone[t.ID] {
				given = append(given, t)
			} else {
				kept = append(kept, t)
			}
		}
	}
	if over := g.overLimits(ctx, kept, given); len(over) > 0 {
		kept = slices.DeleteFunc(kept, func(t task.Task) bool {
			if msg := over[t.ID]; msg != "" {
				back = append(back, Back{t, GiveBack(t, worker, now, LimitWait, msg)})
				return true
			}
			return false
		})
	}
	kept, slowed := g.rated(ctx, worker, kept, now)
	return kept, append(back, slowed...)
}

// refuseFailFast fails at once, for good, the tasks of the groups that
// fail fast while their breaker is open and cooling down, and returns the
// others.
func (g *Gate) refuseFailFast(ts []task.Task, now time.Time) ([]task.Task, []Back) {
	var back []Back
	var fast map[string]bool
	g.mu.Lock()
	for name, gr := range g.groups {
		if FailsFast(gr, now) {
			if fast == nil {
				fast = map[string]bool{}
			}
			fast[name] = true
		}
	}
	g.mu.Unlock()
	if len(fast) == 0 {
		return ts, nil
	}
	kept := ts[:0:0]
	for _, t := range ts {
		if t.Group == "" || !fast[t.Group] {
			kept = append(kept, t)
			continue
		}
		f := BaseFinish(t)
		f.Attempt.StartedAt, f.Attempt.EndedAt = now, now
		decide.Failure(&f, t, BreakerRefusal(t.Group), g.cfg.Policy(t), now)
		back = append(back, Back{t, f})
	}
	return kept, back
}

// ramp passes the claimed tasks of each group or held kind whose breaker
// closed lately through its ramp (breaker.Settings.Admit), in one locked
// update of the store's group a hold, so that the fleet shares it: as many
// go as its rate has tokens for, and the others are given back to come
// again one after another at the rate, using no attempt.
func (g *Gate) ramp(ctx context.Context, worker string, ts []task.Task, now time.Time) ([]task.Task, []Back) {
	var ramping map[string]bool // most claims find none: no lookup per task
	g.mu.Lock()
	for name, gr := range g.groups {
		if gr.Circuit.Ramp != nil && g.cfg.Protection.Settings(gr).Ramping(gr.Circuit, now) {
			if ramping == nil {
				ramping = map[string]bool{}
			}
			ramping[name] = true
		}
	}
	g.mu.Unlock()
	if ramping == nil {
		return ts, nil
	}
	var byHold map[string][]task.Task
	for _, t := range ts {
		if name := HoldOf(t); ramping[name] {
			if byHold == nil {
				byHold = map[string][]task.Task{}
			}
			byHold[name] = append(byHold[name], t)
		}
	}
	if byHold == nil {
		return ts, nil
	}
	var back []Back
	gone := map[int64]bool{}
	for _, name := range slices.Sorted(maps.Keys(byHold)) {
		held := byHold[name]
		var a rate.Admission
		gr, err := g.gb.UpdateGroup(ctx, name, func(gr *store.Group) {
			a = g.cfg.Protection.Settings(*gr).Admit(&gr.Circuit, len(held), now)
		})
		if err != nil {
			g.cfg.Logger.Warn("could not reach the ramp after a breaker closed; going on", "hold", name, "err", err)
			continue
		}
		g.setGroup(name, gr)
		for i, t := range held[min(a.Go, len(held)):] {
			w := a.Wait[i]
			gone[t.ID] = true
			back = append(back, Back{t, GiveBack(t, worker, now, w, fmt.Sprintf("%s ramps up after an outage, at %.3g calls a second: waiting %v", holdWords(name), rampRate(gr), w.Round(time.Millisecond)))})
		}
	}
	if len(gone) == 0 {
		return ts, nil
	}
	return slices.DeleteFunc(ts, func(t task.Task) bool { return gone[t.ID] }), back
}

// holdWords names a hold for people: "group NAME" or "kind NAME".
func holdWords(name string) string {
	if k, ok := strings.CutPrefix(name, KindHold); ok {
		return "kind " + k
	}
	return "group " + name
}

func rampRate(gr store.Group) float64 {
	if r := gr.Circuit.Ramp; r != nil {
		return r.Rate
	}
	return 0
}

// BaseFinish is the Finish of t's current attempt that keeps the task's
// failure record as it is, for a decision to fill in.
func BaseFinish(t task.Task) store.Finish {
	return store.Finish{
		TaskID: t.ID, Token: t.LeaseToken,
		Error: t.LastError, Fingerprint: t.Fingerprint, Streak: t.Streak, PrevDelay: t.PrevDelay,
		Attempt: task.Attempt{TaskID: t.ID, Number: t.Attempt, Worker: t.LeaseOwner, LeaseToken: t.LeaseToken},
	}
}

// admitGroups passes the claimed tasks of each group through the group's
// retry budget and limit, in one locked update a group, and returns what
// it gives back. The n-th retry refused in a group waits BudgetWait plus
// the time the budget's floor takes to bring n tokens, so that it is not
// refused again and again; a task past the limit waits LimitWait, and the
// group is left alone as long.
func (g *Gate) admitGroups(ctx context.Context, worker string, ts []task.Task, now time.Time) []Back {
	var byGroup map[string][]task.Task // most claims have no grouped task: no map
	for _, t := range ts {
		if t.Group != "" {
			if byGroup == nil {
				byGroup = map[string][]task.Task{}
			}
			byGroup[t.Group] = append(byGroup[t.Group], t)
		}
	}
	var back []Back
	rates, wait := g.cfg.Protection.RetryBudget, g.cfg.Protection.BudgetWait
	for _, name := range slices.Sorted(maps.Keys(byGroup)) {
		group := byGroup[name]
		var firsts int
		var retries []task.Task
		for _, t := range group {
			if t.Attempt <= 1 {
				firsts++
			} else {
				retries = append(retries, t)
			}
		}
		var took int
		var over map[int64]bool
		var atLimit bool
		gr, err := g.gb.UpdateGroup(ctx, name, func(gr *store.Group) {
			took = AdmitGroup(gr, now, firsts, len(retries), rates)
			over = overLimit(gr, group, retries[took:])
			// The retries refused are running still, as far as the store knows.
			atLimit = gr.Limit > 0 && len(gr.RunningIDs)-(len(retries)-took) >= gr.Limit
		})
		if err != nil {
			g.cfg.Logger.Warn("could not reach the group's retry budget and limit; going on", "group", name, "err", err)
			continue
		}
		g.setGroup(name, gr)
		if atLimit {
			g.markFull(Full{store.ScopeGroup, name})
		}
		for i, t := range retries[took:] {
			w := wait
			if f := rates.Floor; f > 0 {
				w += time.Duration(float64(i) / f * float64(time.Second))
			}
			back = append(back, Back{t, GiveBack(t, worker, now, w, fmt.Sprintf("the retry budget of group %s is spent: waiting %v", name, w.Round(time.Millisecond)))})
		}
		for _, t := range group {
			if over[t.ID] {
				back = append(back, Back{t, GiveBack(t, worker, now, LimitWait, fmt.Sprintf("group %s is at its limit of running attempts: waiting %v", name, LimitWait))})
			}
		}
	}
	return back
}

// AdmitGroup admits, in one locked update of a group, what a claimer
// claimed of it: its first attempts deposit in the group's retry budget,
// and its retries take from it (took of them may run).
func AdmitGroup(g *store.Group, now time.Time, firsts, retries int, rates store.BudgetRates) (took int) {
	g.Budget.Deposit(now, firsts, rates)
	return g.Budget.Withdraw(now, retries, rates)
}

func (g *Gate) markFull(fs ...Full) {
	until := g.cfg.Clock.Now().Add(LimitWait)
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, f := range fs {
		g.full[f] = until
	}
}

// overLimit picks which of a claimer's tasks of a group (mine, but for the
// retries the budget refused) pass its limit: those placed at the limit or
// past it among the group's running tasks in claim order (RunningIDs, the
// refused retries left out; see pastLimit).
func overLimit(g *store.Group, mine, refused []task.Task) map[int64]bool {
	if g.Limit <= 0 {
		return nil
	}
	gone := make(map[int64]bool, len(refused))
	for _, t := range refused {
		gone[t.ID] = true
	}
	own := make(map[int64]bool, len(mine))
	for _, t := range mine {
		own[t.ID] = true
	}
	past, _ := pastLimit(g.RunningIDs, own, gone, g.Limit)
	over := make(map[int64]bool, len(past))
	for _, id := range past {
		over[id] = true
	}
	return over
}

// pastLimit places a scope's running tasks in claim order (order), leaving
// out those going back (gone), and returns those of mine placed at the
// limit or past it, with how many took a place. Every claimer places the
// tasks alike, so between them they keep the first tasks claimed, up to
// the limit. (Counting alone, two claimers whose claims overlapped each saw
// the other's tasks as running, and gave back all of their own, again at
// every claim.)
func pastLimit(order []int64, mine, gone map[int64]bool, limit int) (past []int64, placed int) {
	for _, id := range order {
		switch {
		case gone[id]:
		case mine[id] && placed >= limit:
			past = append(past, id)
		default:
			placed++
		}
	}
	return past, placed
}

// GiveBack is the Finish that gives a claimed task back to wait, without
// using an attempt: its group's retry budget is spent, or a limit is
// reached. It is counted on the task (Waits), not written as an attempt:
// the history keeps attempts. msg says why on the Finish's attempt, for
// the logs.
func GiveBack(t task.Task, worker string, now time.Time, wait time.Duration, msg string) store.Finish {
	return store.Finish{
		TaskID: t.ID, Token: t.LeaseToken, State: task.Retrying, NextAt: now.Add(wait), Refund: true, Waited: true,
		Error: t.LastError, Fingerprint: t.Fingerprint, Streak: t.Streak, PrevDelay: t.PrevDelay,
		Attempt: task.Attempt{TaskID: t.ID, Number: t.Attempt, Worker: worker, LeaseToken: t.LeaseToken,
			Outcome: task.OutcomeReleased, Error: msg, StartedAt: now, EndedAt: now, Decision: "budget"},
	}
}

// overLimits places the running attempts of the limited queues and
// tenants of kept in claim order and returns, by task id, why each task
// of kept placed at a limit or past it is to be given back; it marks the
// queues and tenants at their limit full. Every claimer places them
// alike, so that between them they keep the first claimed (see
// overLimit). refused are tasks of the same claim given back already:
// running still, as far as the store knows, but not placed.
func (g *Gate) overLimits(ctx context.Context, kept, refused []task.Task) map[int64]string {
	g.mu.Lock()
	max := g.max
	g.mu.Unlock()
	if len(max) == 0 || len(kept) == 0 {
		return nil
	}
	over, full, err := OverLimits(ctx, g.lim, kept, refused, max)
	if err != nil {
		g.cfg.Logger.Warn("could not count running attempts for the limits; going on", "err", err)
	}
	g.markFull(full...)
	return over
}

// OverLimits is overLimits on limiter l with the limits max, by scope and
// name; it returns the queues and tenants at their limit.
func OverLimits(ctx context.Context, l store.Limiter, kept, refused []task.Task, max map[store.Scope]map[string]int) (map[int64]string, []Full, error) {
	over := map[int64]string{}
	var full []Full
	back := make(map[int64]bool, len(refused))
	for _, t := range refused {
		back[t.ID] = true
	}
	for _, s := range scopes {
		byName := map[string]map[int64]bool{}
		for _, t := range kept {
			if n := scopeOf(t, s); max[s][n] > 0 && over[t.ID] == "" {
				if byName[n] == nil {
					byName[n] = map[int64]bool{}
				}
				byName[n][t.ID] = true
			}
		}
		if len(byName) == 0 {
			continue
		}
		running, err := l.Running(ctx, s, slices.Sorted(maps.Keys(byName)))
		if err != nil {
			return over, full, fmt.Errorf("running attempts by %s: %w", s, err)
		}
		for _, n := range slices.Sorted(maps.Keys(byName)) {
			past, placed := pastLimit(running[n], byName[n], back, max[s][n])
			for _, id := range past {
				over[id] = fmt.Sprintf("%s %s is at its limit of %d running attempts: waiting %v", s, n, max[s][n], LimitWait)
				back[id] = true // going back: it takes no place in the next scope
			}
			if placed >= max[s][n] {
				full = append(full, Full{s, n})
			}
		}
	}
	return over, full, nil
}
