package store

import (
	"cmp"
	"context"
	"math"
	"time"

	"github.com/grit-run/grit/rate"
)

// Scope is what a concurrency limit counts: the running attempts of a
// queue, of a tenant, or of a group. (A group's limit is kept with its
// breaker, Group.Limit: SetLimit takes queues and tenants.)
type Scope string

const (
	ScopeQueue  Scope = "queue"
	ScopeTenant Scope = "tenant"
	ScopeGroup  Scope = "group"
)

// Limit bounds the running attempts of one queue or tenant across the
// fleet. Running is how many run now, as Limits counted them.
type Limit struct {
	Scope   Scope  `json:"scope"`
	Name    string `json:"name"`
	Max     int    `json:"max"`
	Running int    `json:"running"`
}

// Limiter is part of Store: concurrency limits per queue and per tenant,
// kept in the store so that every worker of a fleet keeps to the same
// ones. Workers enforce them: after a claim, a worker counts the running
// attempts of each limited queue and tenant it claimed tasks of (its own
// claims included, as they have committed) and gives back, using no
// attempt, what passes the limit. Of two workers that claim at once, the
// later count sees both claims, so the limit holds.
type Limiter interface {
	// SetLimit sets a limit; a Max of 0 removes it.
	SetLimit(ctx context.Context, l Limit) error
	// Limits returns every limit, by scope and name, with its running
	// attempts counted.
	Limits(ctx context.Context) ([]Limit, error)
	// Running returns the running tasks of the named queues, tenants or
	// groups: each name's ids in the order they were claimed (by the
	// claim's start, then by id); a name with none is absent from the map.
	// Claimers that admit by that order agree on which of a scope's
	// running tasks are within its limit.
	Running(ctx context.Context, scope Scope, names []string) (map[string][]int64, error)

	// SetRate sets a rate; a Limit.Rate of 0 removes it. A rate set again
	// keeps its bucket (its tokens then stop at the new burst).
	SetRate(ctx context.Context, r Rate) error
	// Rates returns every rate, by scope and name, with its bucket as the
	// last take left it.
	Rates(ctx context.Context) ([]Rate, error)
	// TakeRates changes the rates of keys with fn, in one transaction
	// that holds their locks (taken in the order of their keys), and
	// writes back their buckets: a claimer takes the tokens of a whole
	// claim batch, for every scope it touches, in one call. fn gets those
	// of keys that have a rate (none: it is not called); it may be called
	// again when the transaction is retried after a conflict, and must
	// then start over.
	TakeRates(ctx context.Context, keys []RateKey, fn func(map[RateKey]*Rate)) error
}

// RateKey names a rate: a queue's, a kind's, a group's or a tenant's.
type RateKey struct {
	Scope Scope  `json:"scope"`
	Name  string `json:"name"`
}

// Compare orders keys by scope, then name: the order TakeRates locks
// them in.
func (k RateKey) Compare(o RateKey) int {
	return cmp.Or(cmp.Compare(k.Scope, o.Scope), cmp.Compare(k.Name, o.Name))
}

func (k RateKey) String() string { return string(k.Scope) + " " + k.Name }

// Rate limits the calls a second that a queue, kind, group or tenant
// starts across the fleet: a token bucket (rate.Bucket) kept in the
// store. Workers take its tokens for a whole claim batch at once
// (TakeRates); a task without one is given back, using no attempt, told
// when to come back, one after another at the rate.
type Rate struct {
	RateKey
	Limit  rate.Limit  `json:"limit"`
	Bucket rate.Bucket `json:"bucket"`
}

// Waiting is about how many calls the rate holds back at now: those told
// to come back after now (Bucket.Next), at one an interval.
func (r Rate) Waiting(now time.Time) int {
	if !(r.Limit.Rate > 0) || !r.Bucket.Next.After(now) {
		return 0
	}
	return int(math.Ceil(r.Bucket.Next.Sub(now).Seconds()*r.Limit.Rate - 1e-9))
}

// MaxRate is the highest rate and burst that can be set: a billion.
const MaxRate = 1e9

// ValidateRate checks a rate before it is set.
func ValidateRate(r Rate) error {
	l := r.Limit
	switch {
	case r.Scope != ScopeQueue && r.Scope != ScopeKind && r.Scope != ScopeGroup && r.Scope != ScopeTenant:
		return invalid("rate scope %q: want queue, kind, group or tenant", r.Scope)
	case r.Name == "" || len(r.Name) > 200:
		return invalid("rate of %s %q: want a name of 1 to 200 characters", r.Scope, r.Name)
	case !(l.Rate >= 0 && l.Rate <= MaxRate):
		return invalid("rate of %s %s: %v calls a second: want 0 (no rate) up to a billion", r.Scope, r.Name, l.Rate)
	case !(l.Burst >= 0 && l.Burst <= MaxRate):
		return invalid("rate of %s %s: a burst of %v: want 0 (a second's worth) up to a billion", r.Scope, r.Name, l.Burst)
	}
	return nil
}

// ValidateRateKeys checks the keys a driver is asked to take.
func ValidateRateKeys(keys []RateKey) error {
	for _, k := range keys {
		if err := ValidateRate(Rate{RateKey: k}); err != nil {
			return err
		}
	}
	return nil
}

// ValidateLimit checks a limit before it is set.
func ValidateLimit(l Limit) error {
	switch {
	case l.Scope != ScopeQueue && l.Scope != ScopeTenant:
		return invalid("limit scope %q: want queue or tenant (a group's limit is set with its breaker)", l.Scope)
	case l.Name == "" || len(l.Name) > 200:
		return invalid("limit of %s %q: want a name of 1 to 200 characters", l.Scope, l.Name)
	case l.Max < 0:
		return invalid("limit of %s %q: %d running attempts: want 0 (no limit) or more", l.Scope, l.Name, l.Max)
	}
	return nil
}

// ValidateScope checks a scope a driver is asked to count.
func ValidateScope(s Scope) error {
	if s != ScopeQueue && s != ScopeTenant && s != ScopeGroup {
		return invalid("count running attempts of %q: want queue, tenant or group", s)
	}
	return nil
}
