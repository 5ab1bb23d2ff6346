package gate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/grit-run/grit/rate"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// rateScopes are the scopes a rate may be set on, in the order a claimed
// task asks their rates for a token.
var rateScopes = [...]store.Scope{store.ScopeQueue, store.ScopeKind, store.ScopeGroup, store.ScopeTenant}

// rateKey is the rate of t's queue, kind, group or tenant ("": none).
func rateKey(t task.Task, s store.Scope) store.RateKey {
	k := store.RateKey{Scope: s}
	switch s {
	case store.ScopeQueue:
		k.Name = t.Queue
	case store.ScopeKind:
		k.Name = t.Kind
	case store.ScopeGroup:
		k.Name = t.Group
	case store.ScopeTenant:
		k.Name = t.Tenant
	}
	return k
}

// RateMetrics is a Metrics that also counts the calls a rate held back,
// by the scope of the rate (queue, kind, group or tenant). The metrics
// package's counters are one.
type RateMetrics interface {
	RateHeld(scope string, n int)
}

// rateWait is why a task waits for a rate, and how long.
type rateWait struct {
	key   store.RateKey
	limit rate.Limit
	wait  time.Duration
}

// rated passes the claimed tasks through the rates of their queues,
// kinds, groups and tenants, taking the tokens of the whole claim in one
// call to the store (one locked update of every rate the claim touches),
// so that the fleet shares each rate: as many go as a rate has tokens
// for, and the others are given back, using no attempt, to come again one
// after another at the rate.
func (g *Gate) rated(ctx context.Context, worker string, ts []task.Task, now time.Time) ([]task.Task, []Back) {
	g.mu.Lock()
	limits := g.rates
	g.mu.Unlock()
	if len(limits) == 0 || len(ts) == 0 {
		return ts, nil
	}
	var keys []store.RateKey
	for _, t := range ts {
		for _, s := range rateScopes {
			if k := rateKey(t, s); k.Name != "" && limits[k] && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		return ts, nil
	}
	slices.SortFunc(keys, store.RateKey.Compare)
	var waits map[int64]rateWait
	err := g.lim.TakeRates(ctx, keys, func(rs map[store.RateKey]*store.Rate) { waits = takeRates(rs, ts, now) })
	if err != nil {
		g.cfg.Logger.Warn("could not take the rates' tokens; going on", "err", err)
		return ts, nil
	}
	if len(waits) == 0 {
		return ts, nil
	}
	var back []Back
	held := map[store.Scope]int{}
	kept := slices.DeleteFunc(ts, func(t task.Task) bool {
		w, ok := waits[t.ID]
		if ok {
			held[w.key.Scope]++
			msg := fmt.Sprintf("%s is at its rate of %s: waiting %v", w.key, w.limit, w.wait.Round(time.Millisecond))
			back = append(back, Back{t, GiveBack(t, worker, now, w.wait, msg)})
		}
		return ok
	})
	if m, ok := g.cfg.Metrics.(RateMetrics); ok {
		for _, s := range slices.Sorted(maps.Keys(held)) {
			m.RateHeld(string(s), held[s])
		}
	}
	return kept, back
}

// takeRates takes from rs, at now, a token of each rate of each of ts, in
// claim order, scope after scope: a task a rate refuses asks no further
// rate, and waits as that rate tells it; the tokens it took from the
// rates before are given back. It returns the tasks refused.
func takeRates(rs map[store.RateKey]*store.Rate, ts []task.Task, now time.Time) map[int64]rateWait {
	out := map[int64]rateWait{}
	took := map[store.RateKey][]int64{}
	for _, s := range rateScopes {
		var byKey map[store.RateKey][]task.Task
		for _, t := range ts {
			k := rateKey(t, s)
			if _, refused := out[t.ID]; refused || rs[k] == nil {
				continue
			}
			if byKey == nil {
				byKey = map[store.RateKey][]task.Task{}
			}
			byKey[k] = append(byKey[k], t)
		}
		for _, k := range slices.SortedFunc(maps.Keys(byKey), store.RateKey.Compare) {
			r, asks := rs[k], byKey[k]
			a := r.Bucket.Take(len(asks), r.Limit.Rate, r.Limit.BurstOr(), now)
			for _, t := range asks[:a.Go] {
				took[k] = append(took[k], t.ID)
			}
			for i, t := range asks[a.Go:] {
				out[t.ID] = rateWait{key: k, limit: r.Limit, wait: a.Wait[i]}
			}
		}
	}
	for k, ids := range took {
		n := 0
		for _, id := range ids {
			if _, refused := out[id]; refused {
				n++
			}
		}
		if n > 0 {
			rs[k].Bucket.Give(n, rs[k].Limit.BurstOr())
		}
	}
	return out
}
