package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// The downstream protection as pure steps, so that a worker that is not an
// Engine (the API server, claiming for remote workers) applies it the same
// way.

// HeldBack reports whether a group's tasks wait at now, whoever claims:
// its breaker is open or half-open (only probes go), or its resource
// pressure holds it back. (An engine also holds a group back for its own
// window and ramp.)
func HeldBack(g store.Group, now time.Time) bool {
	s := g.Circuit.State
	return now.Before(g.Pressure.Until) || s == breaker.Open || s == breaker.HalfOpen
}

// RecordResult records in its group how an attempt ended (f, as its
// worker reports it; probe if it was the breaker's probe): the breaker
// counts it, a resource failure raises the group's pressure and a success
// eases it. It reports whether the end said anything of the downstream.
func RecordResult(g *store.Group, s breaker.Settings, f store.Finish, probe bool, now time.Time, base, max time.Duration) bool {
	r, ok := resultOf(f, probe)
	if ok {
		r.apply(g, s, now, base, max)
	}
	return ok
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
		gr.Pressure.Raise(now, base, max)
	case r.ok:
		gr.Pressure.Ease()
	}
}

// Refusal is a claimed task a group's retry budget or limit sends back to
// wait, using no attempt (GiveBack with Wait and Why).
type Refusal struct {
	Task task.Task
	Wait time.Duration
	Why  string
}

// GroupAdmission is what AdmitGroups decided for one group.
type GroupAdmission struct {
	Group   store.Group // as the update left it
	AtLimit bool        // its running attempts reach its limit: leave it alone a moment
	Err     error       // the store could not be reached: its tasks go on
}

// AdmitGroups passes the claimed tasks of each group through the group's
// retry budget and limit, in one locked update a group (AdmitGroup), and
// returns the tasks to give back and what it decided of each group. The
// n-th retry refused in a group waits budgetWait plus the time the
// budget's floor takes to bring n tokens, so that it is not refused again
// and again; a task past the limit waits LimitWait.
func AdmitGroups(ctx context.Context, gb store.GroupBreakers, ts []task.Task, now time.Time, rates store.BudgetRates, budgetWait time.Duration) ([]Refusal, map[string]GroupAdmission) {
	var byGroup map[string][]task.Task // most claims have no grouped task: no map
	for _, t := range ts {
		if t.Group != "" {
			if byGroup == nil {
				byGroup = map[string][]task.Task{}
			}
			byGroup[t.Group] = append(byGroup[t.Group], t)
		}
	}
	if byGroup == nil {
		return nil, nil
	}
	var back []Refusal
	out := make(map[string]GroupAdmission, len(byGroup))
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
		var a GroupAdmission
		a.Group, a.Err = gb.UpdateGroup(ctx, name, func(gr *store.Group) {
			took = AdmitGroup(gr, now, firsts, len(retries), rates)
			over = overLimit(gr, group, retries[took:])
			// The retries refused are running still, as far as the store knows.
			a.AtLimit = gr.Limit > 0 && len(gr.RunningIDs)-(len(retries)-took) >= gr.Limit
		})
		out[name] = a
		if a.Err != nil {
			continue
		}
		for i, t := range retries[took:] {
			wait := budgetWait
			if f := rates.Floor; f > 0 {
				wait += time.Duration(float64(i) / f * float64(time.Second))
			}
			back = append(back, Refusal{t, wait, fmt.Sprintf("the retry budget of group %s is spent: waiting %v", name, wait.Round(time.Millisecond))})
		}
		for _, t := range group {
			if over[t.ID] {
				back = append(back, Refusal{t, LimitWait, fmt.Sprintf("group %s is at its limit of running attempts: waiting %v", name, LimitWait)})
			}
		}
	}
	return back, out
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
// limit or past it, with how many took a place. Every claimer places the tasks alike, so between them they
// keep the first tasks claimed, up to the limit. (Counting alone, two
// claimers whose claims overlapped each saw the other's tasks as running,
// and gave back all of their own, again at every claim.)
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

// AdmitGroup admits, in one locked update of a group, what a worker
// claimed of it: its first attempts deposit in the group's retry budget,
// and its retries take from it (took of them may run).
func AdmitGroup(g *store.Group, now time.Time, firsts, retries int, rates store.BudgetRates) (took int) {
	g.Budget.Deposit(now, firsts, rates)
	return g.Budget.Withdraw(now, retries, rates)
}

// GiveBack is the Finish that gives a claimed task back to wait, without
// using an attempt: its group's retry budget is spent, or a limit is
// reached. Its history shows a RELEASED attempt that says why.
func GiveBack(t task.Task, worker string, now time.Time, wait time.Duration, msg string) store.Finish {
	return store.Finish{
		TaskID: t.ID, Token: t.LeaseToken, State: task.Retrying, NextAt: now.Add(wait), Refund: true,
		Error: t.LastError, Fingerprint: t.Fingerprint, Streak: t.Streak, PrevDelay: t.PrevDelay,
		Attempt: task.Attempt{TaskID: t.ID, Number: t.Attempt, Worker: worker, LeaseToken: t.LeaseToken,
			Outcome: task.OutcomeReleased, Error: msg, StartedAt: now, EndedAt: now, Decision: "budget"},
	}
}

// LimitWait is how long a task given back at a limit waits, and how long
// a claimer then leaves the queue, tenant or group alone.
const LimitWait = 100 * time.Millisecond

// Full names a queue or tenant at its limit.
type Full struct {
	Scope store.Scope
	Name  string
}

// OverLimits places the running attempts of the limited queues and
// tenants of kept (max: the limits by scope and name) in claim order and
// returns, by task id, why each task of kept placed at a limit or past it
// is to be given back, and the queues and tenants at their limit. Every
// claimer places them alike, so that between them they keep the first
// claimed (see overLimit). refused are tasks of the same claim given back
// already: running still, as far as the store knows, but not placed.
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
