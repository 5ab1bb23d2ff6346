package store

import (
	"context"
	"time"

	"github.com/grit-run/grit/breaker"
)

// Group is what the store keeps of a group (the downstream its tasks
// call): its circuit breaker, and how the breaker is set.
type Group struct {
	Circuit breaker.Circuit `json:"circuit"`
	// Settings, when set, replace the workers' breaker settings for this
	// group (their zero fields mean breaker's defaults).
	Settings *breaker.Settings `json:"settings,omitempty"`
	// FailFast fails the group's tasks at once while its breaker is open,
	// instead of holding them back.
	FailFast bool `json:"fail_fast,omitempty"`
	// Pressure is the group's resource pressure: workers hold its tasks
	// back until Until.
	Pressure Pressure `json:"pressure"`
	// Budget is the group's retry budget: retries may be at most a share
	// of first attempts, plus a small floor.
	Budget Budget `json:"budget"`
	// Limit bounds the group's running attempts across the fleet (0: no
	// bound). RunningIDs are the tasks that run now, in the order they were
	// claimed (by the claim's start, then by id): UpdateGroup reads them,
	// under the group's lock, when the group has a limit; they are not
	// kept. Claimers that admit by that order agree on which of the running
	// tasks are within the limit.
	Limit      int     `json:"limit,omitempty"`
	RunningIDs []int64 `json:"-"`
	// Outage, when set, is the failure for which the group (or, named
	// "kind:KIND", a kind whose tasks have no group) is held as an outage:
	// its breaker was opened because many of its tasks failed alike and
	// none succeeded. It is cleared when the breaker closes.
	Outage *Outage `json:"outage,omitempty"`
}

// KindHold is the prefix of the name of a group that holds a kind, not a
// group, as an outage (see Group.Outage): "kind:" and the kind.
const KindHold = "kind:"

// Outage is the failure an outage is held for.
type Outage struct {
	Fingerprint string    `json:"fingerprint"`
	Error       string    `json:"error"`
	Kind        string    `json:"kind"` // of the task whose failure declared it
	Since       time.Time `json:"since"`
}

// Budget is a token bucket kept in the store, so that the fleet shares it:
// each first attempt deposits ratio tokens, each retry takes one, floor
// tokens a second come in whatever the traffic, and the bucket holds at
// most burst. A retry without a token waits instead of running. (As
// retry.Budget, for one process.)
type Budget struct {
	Tokens float64   `json:"tokens"`
	Last   time.Time `json:"last"`
}

// BudgetRates are a budget's parameters.
type BudgetRates struct {
	Ratio, Floor, Burst float64
}

// DefaultBudget is 20% of first attempts, one retry a second, up to 10
// at once.
var DefaultBudget = BudgetRates{Ratio: 0.2, Floor: 1, Burst: 10}

func (b *Budget) refill(now time.Time, r BudgetRates) {
	if b.Last.IsZero() {
		b.Tokens, b.Last = r.Burst, now
		return
	}
	if dt := now.Sub(b.Last); dt > 0 {
		b.Tokens = min(b.Tokens+r.Floor*dt.Seconds(), r.Burst)
		b.Last = now
	}
}

// Available is how many tokens the budget holds at now: those it kept,
// with what its floor brought in since.
func (b Budget) Available(now time.Time, r BudgetRates) float64 {
	b.refill(now, r)
	return b.Tokens
}

// Deposit records n first attempts at now.
func (b *Budget) Deposit(now time.Time, n int, r BudgetRates) {
	b.refill(now, r)
	b.Tokens = min(b.Tokens+r.Ratio*float64(n), r.Burst)
}

// Withdraw takes up to n retries' tokens at now and returns how many it
// took.
func (b *Budget) Withdraw(now time.Time, n int, r BudgetRates) int {
	b.refill(now, r)
	k := min(n, int(b.Tokens))
	b.Tokens -= float64(k)
	return k
}

// Pressure slows a whole group's dispatch when its downstream reports
// resource pressure (a full cluster, a quota): each resource failure
// raises the level and holds the group's tasks back for a delay that
// doubles with it; each success lowers it.
type Pressure struct {
	Level int       `json:"level,omitempty"`
	Until time.Time `json:"until,omitempty"`
}

// Raise records a resource failure at now: the first holds the group back
// for base, each further one twice as long, up to limit. Failures during a
// hold are the same congestion (attempts that were running when it began)
// and change nothing.
func (p *Pressure) Raise(now time.Time, base, limit time.Duration) {
	if now.Before(p.Until) {
		return
	}
	p.Level++
	d := limit
	if p.Level < 31 {
		d = min(base<<(p.Level-1), limit)
	}
	if until := now.Add(d); until.After(p.Until) {
		p.Until = until
	}
}

// Hold holds the group back until at least until: a downstream asked to
// be left alone so long (Retry-After). A hold that ends later already is
// kept, so that a burst of answers asking alike holds the group once and
// does not push the hold on and on.
func (p *Pressure) Hold(until time.Time) {
	if until.After(p.Until) {
		p.Until = until
	}
}

// Ease records a success.
func (p *Pressure) Ease() { p.Level = max(p.Level-1, 0) }

// GroupBreakers is part of Store: each group's circuit breaker, retry
// budget and limit, kept in the store so that every worker of a fleet sees
// one state, and changed under a lock so that they change it one at a
// time.
type GroupBreakers interface {
	// Groups returns every group the store keeps.
	Groups(ctx context.Context) (map[string]Group, error)
	// UpdateGroup changes a group with fn, in a transaction of its own,
	// and returns it as fn left it. A group the store does not keep yet
	// starts from the zero Group (breaker closed, workers' settings).
	UpdateGroup(ctx context.Context, name string, fn func(*Group)) (Group, error)
}

// ValidateGroup checks a group's name.
func ValidateGroup(g string) error {
	if g == "" || len(g) > 200 {
		return invalid("group %q: want a name of 1 to 200 characters", g)
	}
	return nil
}
