package store

import "context"

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
