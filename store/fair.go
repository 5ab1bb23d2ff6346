package store

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/grit-run/grit/task"
)

// DefaultWeight is a tenant's weight in fair claims until one is set:
// tenants of equal weight take turns, one task each.
const DefaultWeight = 1

// MaxWeight is the largest weight a tenant can be given.
const MaxWeight = 1000

// StampBatch is how many tasks that came due without a stamp (retries,
// snoozes, scheduled tasks) a claim stamps at most before it takes its
// own: tasks that come due together (a schedule's slot, the retries of one
// outage) are stamped over a few claims, none of which waits long.
const StampBatch = 1000

// Weigher is an optional capability: tenants' weights in fair claims,
// shared by the fleet. Among due tasks of one priority, a claim takes
// tenants in turn (docs/engine.md, "Fair claims"); a tenant of weight w
// takes w tasks to a tenant of weight 1's one. Without it every tenant
// has DefaultWeight: claims are still fair, in equal turns.
type Weigher interface {
	// SetWeight sets a tenant's weight ("" is the tasks without a
	// tenant); DefaultWeight removes it. It applies to the tasks stamped
	// from then on (those enqueued, and those coming due), not to those
	// already waiting their turn.
	SetWeight(ctx context.Context, tenant string, weight int) error
	// Weights returns the weights set, by tenant.
	Weights(ctx context.Context) (map[string]int, error)
}

// ValidateWeight checks a tenant's weight before it is set.
func ValidateWeight(tenant string, weight int) error {
	switch {
	case len(tenant) > 200:
		return invalid("weight of tenant %.20q…: want a name of at most 200 characters", tenant)
	case weight < 1 || weight > MaxWeight:
		return invalid("weight of tenant %q: %d: want 1 to %d (%d is the default)", tenant, weight, MaxWeight, DefaultWeight)
	}
	return nil
}

// Lane is where a task takes its turn in fair claims: its tenant's
// tasks of one queue and priority.
type Lane struct {
	Queue    string
	Priority int
	Tenant   string
}

// LaneOf is a new task's lane ("" queue is "default").
func LaneOf(t task.NewTask) Lane {
	q := t.Queue
	if q == "" {
		q = "default"
	}
	return Lane{Queue: q, Priority: t.Priority, Tenant: t.Tenant}
}

// FairRanks gives each task of an enqueue, due by now, its place from 1
// within its lane, in due order (then the order given); 0 for a task not
// due yet, which the claim that finds it due stamps. A driver stamps a
// task base + rank × step of its lane (see docs/engine.md): the ranks
// of a task whose idempotency key is taken are left unused, a gap that
// costs its lane nothing.
func FairRanks(ts []task.NewTask, now time.Time) []int {
	due := make([]int, 0, len(ts))
	for i, t := range ts {
		if t.RunAt.IsZero() || !t.RunAt.After(now) {
			due = append(due, i)
		}
	}
	at := func(i int) time.Time {
		if ts[i].RunAt.IsZero() {
			return now
		}
		return ts[i].RunAt
	}
	slices.SortStableFunc(due, func(a, b int) int { return at(a).Compare(at(b)) })
	ranks := make([]int, len(ts))
	next := map[Lane]int{}
	for _, i := range due {
		l := LaneOf(ts[i])
		next[l]++
		ranks[i] = next[l]
	}
	return ranks
}

// Lanes lists the distinct lanes of the tasks ranked (rank above 0), in
// a stable order.
func Lanes(ts []task.NewTask, ranks []int) []Lane {
	seen := map[Lane]bool{}
	var out []Lane
	for i, t := range ts {
		if l := LaneOf(t); ranks[i] > 0 && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b Lane) int {
		return cmp.Or(cmp.Compare(a.Queue, b.Queue), cmp.Compare(a.Priority, b.Priority), cmp.Compare(a.Tenant, b.Tenant))
	})
	return out
}
