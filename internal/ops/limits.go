package ops

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/grit-run/grit/rate"
	"github.com/grit-run/grit/store"
)

// LimitRow is a limit of a queue, kind, group or tenant as an operator
// reads it: of running attempts (Max, with what runs now), a rate, or
// both.
type LimitRow struct {
	store.Limit
	Rate *rate.Limit `json:"rate,omitempty"`
	// Waiting is about how many tasks the rate holds back now.
	Waiting int `json:"waiting,omitempty"`
	// Weight is a tenant's weight in fair claims, when one is set (0:
	// store.DefaultWeight).
	Weight int `json:"weight,omitempty"`
}

// Limits returns the store's limits of running attempts (the groups'
// last), then its rates, then the tenants' weights in fair claims
// (store.Weigher), one row a queue, kind, group or tenant.
func Limits(ctx context.Context, st store.Store) ([]LimitRow, error) {
	ls, err := st.Limits(ctx)
	if err != nil {
		return nil, err
	}
	gs, err := st.Groups(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, g := range slices.Sorted(maps.Keys(gs)) {
		if gs[g].Limit > 0 {
			names = append(names, g)
		}
	}
	run, err := st.Running(ctx, store.ScopeGroup, names)
	if err != nil {
		return nil, err
	}
	for _, g := range names {
		ls = append(ls, store.Limit{Scope: store.ScopeGroup, Name: g, Max: gs[g].Limit, Running: len(run[g])})
	}
	rs, err := st.Rates(ctx)
	if err != nil {
		return nil, err
	}
	now, err := st.Now(ctx)
	if err != nil {
		return nil, err
	}
	rows := make([]LimitRow, 0, len(ls)+len(rs))
	for _, x := range ls {
		rows = append(rows, LimitRow{Limit: x})
	}
	for _, r := range rs {
		i := slices.IndexFunc(rows, func(x LimitRow) bool { return x.Scope == r.Scope && x.Name == r.Name })
		if i < 0 {
			rows, i = append(rows, LimitRow{Limit: store.Limit{Scope: r.Scope, Name: r.Name}}), len(rows)
		}
		rows[i].Rate, rows[i].Waiting = &r.Limit, r.Waiting(now)
	}
	if w, ok := st.(store.Weigher); ok {
		ws, err := w.Weights(ctx)
		if err != nil {
			return nil, err
		}
		for _, tenant := range slices.Sorted(maps.Keys(ws)) {
			i := slices.IndexFunc(rows, func(x LimitRow) bool { return x.Scope == store.ScopeTenant && x.Name == tenant })
			if i < 0 {
				rows, i = append(rows, LimitRow{Limit: store.Limit{Scope: store.ScopeTenant, Name: tenant}}), len(rows)
			}
			rows[i].Weight = ws[tenant]
		}
	}
	return rows, nil
}

// LimitChange is what an operator sets: a limit of running attempts, a
// rate, a tenant's weight in fair claims, or several.
type LimitChange struct {
	Limit  *store.Limit `json:"limit,omitempty"`
	Rate   *store.Rate  `json:"rate,omitempty"`
	Weight *Weight      `json:"weight,omitempty"`
}

// Weight is a tenant's weight in fair claims ("" is the tasks without a
// tenant): store.DefaultWeight removes it.
type Weight struct {
	Tenant string `json:"tenant"`
	Weight int    `json:"weight"`
}

// ErrNoWeights is SetLimits' error for a weight on a store that keeps
// none (not a store.Weigher).
var ErrNoWeights = errors.New("this store keeps no weights: every tenant takes its turn with weight 1")

// SetLimits sets what ch changes in st; a group's limit of running
// attempts is kept with its breaker.
func SetLimits(ctx context.Context, st store.Store, ch LimitChange) error {
	if lim := ch.Limit; lim != nil {
		if lim.Scope == store.ScopeGroup {
			if err := store.ValidateGroup(lim.Name); err != nil {
				return err
			}
			if _, err := st.UpdateGroup(ctx, lim.Name, func(g *store.Group) { g.Limit = lim.Max }); err != nil {
				return err
			}
		} else if err := st.SetLimit(ctx, *lim); err != nil {
			return err
		}
	}
	if ch.Rate != nil {
		if err := st.SetRate(ctx, *ch.Rate); err != nil {
			return err
		}
	}
	if w := ch.Weight; w != nil {
		ws, ok := st.(store.Weigher)
		if !ok {
			return fmt.Errorf("weight of tenant %q: %w", w.Tenant, ErrNoWeights)
		}
		return ws.SetWeight(ctx, w.Tenant, w.Weight)
	}
	return nil
}

// ParseRate reads a rate as an operator writes it: rateArg N/s, N/m or
// N/h, or 0 to remove it, and burstArg (nil, or "" from a form: not
// given) the calls at once, from 1.
func ParseRate(k store.RateKey, rateArg string, burstArg *string) (store.Rate, error) {
	r := store.Rate{RateKey: k}
	if strings.TrimSpace(rateArg) != "0" {
		v, err := rate.ParseRate(rateArg)
		if err != nil {
			return r, fmt.Errorf("%w (or 0 to remove it)", err)
		}
		r.Limit.Rate = v
	}
	if burstArg != nil && strings.TrimSpace(*burstArg) != "" {
		b, err := strconv.ParseFloat(strings.TrimSpace(*burstArg), 64)
		if err != nil || math.IsNaN(b) || b < 1 || b > store.MaxRate {
			return r, fmt.Errorf("burst %q: want a number of calls at once, from 1 to a billion (e.g. 10)", *burstArg)
		}
		if r.Limit.Rate == 0 {
			return r, fmt.Errorf("burst %s with a rate of 0: a rate removed has no burst (give no burst)", *burstArg)
		}
		r.Limit.Burst = b
	}
	return r, store.ValidateRate(r)
}

// Says is what a change did, for people: one line a limit.
func (ch LimitChange) Says() []string {
	var out []string
	if lim := ch.Limit; lim != nil {
		if lim.Max == 0 {
			out = append(out, fmt.Sprintf("%s %s: no limit", lim.Scope, lim.Name))
		} else {
			out = append(out, fmt.Sprintf("%s %s: at most %d running", lim.Scope, lim.Name, lim.Max))
		}
	}
	if r := ch.Rate; r != nil {
		if r.Limit.Rate == 0 {
			out = append(out, fmt.Sprintf("%s %s: no rate", r.Scope, r.Name))
		} else {
			out = append(out, fmt.Sprintf("%s %s: at most %s (burst %g)", r.Scope, r.Name, rate.Limit{Rate: r.Limit.Rate}, r.Limit.BurstOr()))
		}
	}
	if w := ch.Weight; w != nil {
		if w.Weight == store.DefaultWeight {
			out = append(out, fmt.Sprintf("tenant %s: weight %d (the default)", w.Tenant, w.Weight))
		} else {
			out = append(out, fmt.Sprintf("tenant %s: weight %d", w.Tenant, w.Weight))
		}
	}
	return out
}

// ParseWeight reads a tenant's weight as an operator writes it: a whole
// number from 1 to store.MaxWeight.
func ParseWeight(tenant, arg string) (Weight, error) {
	w := Weight{Tenant: tenant}
	n, err := strconv.Atoi(strings.TrimSpace(arg))
	if err != nil {
		return w, fmt.Errorf("weight %q: want a whole number from 1 to %d (%d is the default)", arg, store.MaxWeight, store.DefaultWeight)
	}
	w.Weight = n
	return w, store.ValidateWeight(tenant, n)
}
