package gate

import (
	"context"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestOverLimitAgreesAcrossClaimers: two claimers whose claims of a
// limited group overlap both see all eight tasks running. Each keeps those
// of its own among the first three claimed, so that together they keep
// three (the limit) and give back the rest; counting alone, each gave
// back all of its own, and at the next claim did so again.
func TestOverLimitAgreesAcrossClaimers(t *testing.T) {
	t.Parallel()
	g := store.Group{Limit: 3, RunningIDs: []int64{1, 5, 2, 6, 3, 7, 4, 8}} // claim order
	mine := func(ids ...int64) []task.Task {
		var ts []task.Task
		for _, id := range ids {
			ts = append(ts, task.Task{ID: id})
		}
		return ts
	}
	a, b := overLimit(&g, mine(1, 2, 3, 4), nil), overLimit(&g, mine(5, 6, 7, 8), nil)
	kept := 0
	for _, id := range []int64{1, 2, 3, 4, 5, 6, 7, 8} {
		if !a[id] && !b[id] {
			kept++
		}
	}
	if kept != 3 || a[1] || a[2] || b[5] || !a[3] || !b[6] {
		t.Errorf("claimer a gives back %v, b %v: want 1, 5 and 2 kept (the first three claimed), the rest given back", a, b)
	}
	// A retry the budget refused is going back anyway: it takes no place.
	if over := overLimit(&g, mine(1, 2, 3, 4), mine(1)); len(over) != 2 || !over[3] || !over[4] {
		t.Errorf("with retry 1 refused, a gives back %v: want 3 and 4 (5, 2 and 6 are the first three)", over)
	}
}

// runningIDs is a store.Limiter whose queues run the given tasks, in claim
// order.
type runningIDs map[string][]int64

func (runningIDs) SetLimit(context.Context, store.Limit) error   { return nil }
func (runningIDs) Limits(context.Context) ([]store.Limit, error) { return nil, nil }
func (runningIDs) SetRate(context.Context, store.Rate) error     { return nil }
func (runningIDs) Rates(context.Context) ([]store.Rate, error)   { return nil, nil }
func (runningIDs) TakeRates(context.Context, []store.RateKey, func(map[store.RateKey]*store.Rate)) error {
	return nil
}
func (r runningIDs) Running(_ context.Context, _ store.Scope, names []string) (map[string][]int64, error) {
	return r, nil
}

// TestOverLimitsAgreeAcrossClaimers: as TestOverLimitAgreesAcrossClaimers,
// for a queue's limit: two claimers that see each other's claims keep,
// between them, the first three claimed.
func TestOverLimitsAgreeAcrossClaimers(t *testing.T) {
	t.Parallel()
	l := runningIDs{"mail": {1, 5, 2, 6, 3, 7, 4, 8}}
	max := map[store.Scope]map[string]int{store.ScopeQueue: {"mail": 3}}
	mine := func(ids ...int64) []task.Task {
		var ts []task.Task
		for _, id := range ids {
			ts = append(ts, task.Task{ID: id, Queue: "mail"})
		}
		return ts
	}
	a, fullA, errA := OverLimits(context.Background(), l, mine(1, 2, 3, 4), nil, max)
	b, fullB, errB := OverLimits(context.Background(), l, mine(5, 6, 7, 8), nil, max)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	kept := 0
	for id := int64(1); id <= 8; id++ {
		if a[id] == "" && b[id] == "" {
			kept++
		}
	}
	if kept != 3 || a[1] != "" || a[2] != "" || b[5] != "" || a[3] == "" || b[6] == "" {
		t.Errorf("claimer a gives back %v, b %v: want 1, 5 and 2 kept (the first three claimed)", a, b)
	}
	if len(fullA) != 1 || len(fullB) != 1 {
		t.Errorf("queues at their limit: %v and %v, want mail for both", fullA, fullB)
	}
	// Tasks of the claim given back already take no place.
	if over, _, _ := OverLimits(context.Background(), l, mine(2, 3, 4), mine(1), max); over[2] != "" || over[3] == "" {
		t.Errorf("with 1 given back, a gives back %v: want 3 and 4 (5, 2 and 6 are the first three)", over)
	}
}
