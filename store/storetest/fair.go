package storetest

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// fairTests check fair claims: among due tasks of one priority, tenants
// take turns (store.Store's Claim), by weight (the optional store.Weigher).
var fairTests = map[string]func(*testing.T, *harness){
	"TenantsTakeTurns": func(t *testing.T, h *harness) {
		h.enqueue(ofTenant("a", 6)...)
		h.enqueue(ofTenant("b", 2)...)
		h.enqueue(ofTenant("c", 2)...)
		got := h.tenantsClaimed(10)
		if want := "a b c a b c a a a a"; got != want {
			t.Errorf("claimed the tenants %q, want %q: a's backlog, enqueued first, must not go first", got, want)
		}
	},
	"ANewcomerWaitsAClaimOrTwo": func(t *testing.T, h *harness) {
		h.enqueue(ofTenant("a", 100)...)
		if got := h.claim(store.ClaimRequest{Limit: 10}); len(got) != 10 {
			t.Fatalf("claimed %d of a's tasks, want 10", len(got))
		}
		h.enqueue(ofTenant("b", 1)...)
		if got := h.tenantsClaimed(2); !strings.Contains(got, "b") {
			t.Errorf("the next two claims took %q, want b's task among them, not after a's 90 waiting", got)
		}
	},
	"PriorityStillComesFirst": func(t *testing.T, h *harness) {
		h.enqueue(ofTenant("a", 5)...)
		high := ofTenant("b", 2)
		for i := range high {
			high[i].Priority = 5
		}
		h.enqueue(high...)
		a := ofTenant("a", 1)
		a[0].Priority, a[0].Kind = 5, "a-high"
		h.enqueue(a...)
		got := h.claim(store.ClaimRequest{Limit: 3})
		for _, tk := range got {
			if tk.Priority != 5 {
				t.Errorf("claimed %s of priority %d among the first three, want the three of priority 5 first", tk.Tenant, tk.Priority)
			}
		}
	},
	"ATenantsRetryTakesItsTurnWhenDue": func(t *testing.T, h *harness) {
		h.enqueue(ofTenant("a", 5)...)
		h.enqueue(ofTenant("b", 5)...)
		first := h.claim(store.ClaimRequest{Limit: 1})[0]
		if first.Tenant != "a" {
			t.Fatalf("first claim took tenant %q, want a", first.Tenant)
		}
		due := h.now().Add(-time.Second)
		h.finish(store.Finish{TaskID: first.ID, Token: first.LeaseToken, State: task.Retrying, NextAt: due,
			Error: "boom", Attempt: task.Attempt{Outcome: task.OutcomeError, Error: "boom"}})
		var order []int64
		for range 10 {
			order = append(order, ids(h.claim(store.ClaimRequest{Limit: 1}))...)
		}
		if len(order) != 10 || order[9] != first.ID {
			t.Errorf("claimed %v, want the retry of %d last: behind a's other four, as it came due after them", order, first.ID)
		}
	},
	"WeightsShareTheClaims": func(t *testing.T, h *harness) {
		w := weigher(h)
		if err := w.SetWeight(h.ctx, "a", 3); err != nil {
			t.Fatal(err)
		}
		h.enqueue(ofTenant("a", 12)...)
		h.enqueue(ofTenant("b", 12)...)
		got := h.tenantsClaimed(8)
		if a, b := strings.Count(got, "a"), strings.Count(got, "b"); a != 6 || b != 2 {
			t.Errorf("claimed %q: a %d, b %d, want 6 and 2 (a has weight 3)", got, a, b)
		}
	},
	"WeightsRoundTrip": func(t *testing.T, h *harness) {
		w := weigher(h)
		for tenant, weight := range map[string]int{"a": 3, "": 2, "b": store.MaxWeight} {
			if err := w.SetWeight(h.ctx, tenant, weight); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.SetWeight(h.ctx, "b", store.DefaultWeight); err != nil {
			t.Fatal(err)
		}
		for _, bad := range []int{0, -1, store.MaxWeight + 1} {
			wantErr(t, w.SetWeight(h.ctx, "c", bad), task.ErrInvalid)
		}
		got, err := w.Weights(h.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"a": 3, "": 2}; !maps.Equal(got, want) {
			t.Errorf("weights %v, want %v (the default weight removes b's)", got, want)
		}
	},
}

// ofTenant is n tasks of a tenant, of the kind named after it.
func ofTenant(tenant string, n int) []task.NewTask {
	ts := make([]task.NewTask, n)
	for i := range ts {
		ts[i] = task.NewTask{Kind: "k", Tenant: tenant, Args: []byte(fmt.Sprintf(`{"n":%d}`, i))}
	}
	return ts
}

// tenantsClaimed claims n tasks, one a claim, and says whose they were.
func (h *harness) tenantsClaimed(n int) string {
	h.t.Helper()
	var got []string
	for range n {
		for _, tk := range h.claim(store.ClaimRequest{Limit: 1}) {
			got = append(got, tk.Tenant)
		}
	}
	return strings.Join(got, " ")
}

// weigher returns the store's store.Weigher, or skips the test: Weigher
// is optional.
func weigher(h *harness) store.Weigher {
	h.t.Helper()
	w, ok := h.s.(store.Weigher)
	if !ok {
		h.t.Skipf("the store (%T) is not a store.Weigher (optional)", h.s)
	}
	return w
}
