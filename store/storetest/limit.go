package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

var limitTests = map[string]func(*testing.T, *harness){
	"TenantIsKeptThroughEnqueueRunsAndEvents": func(t *testing.T, h *harness) {
		got := h.enqueue(task.NewTask{Kind: "k", Tenant: "acme"}, task.NewTask{Kind: "k"})
		if got[0].Tenant != "acme" || got[1].Tenant != "" {
			t.Errorf("enqueued tenants %q and %q, want acme and none", got[0].Tenant, got[1].Tenant)
		}
		if g := h.get(got[0].ID); g.Tenant != "acme" {
			t.Errorf("stored tenant %q, want acme", g.Tenant)
		}
		n := node("a")
		n.Tenant = "globex"
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{n}})
		ts, err := h.s.ListTasks(h.ctx, task.Filter{RunID: r.ID})
		if err != nil || len(ts) != 1 || ts[0].Tenant != "globex" {
			t.Errorf("run's task: %+v (%v), want tenant globex", ts, err)
		}
		if c := h.claim(store.ClaimRequest{Limit: 10}); len(c) != 3 || c[0].Tenant == "" && c[1].Tenant == "" && c[2].Tenant == "" {
			t.Errorf("claimed %+v: want 3 tasks, with their tenants", c)
		}
		if err := h.s.Subscribe(h.ctx, task.Subscription{Topic: "t", Kind: "k"}); err != nil {
			t.Fatal(err)
		}
		ds, err := h.s.Publish(h.ctx, []task.Event{{Topic: "t", Payload: []byte(`{}`), Tenant: "acme"}})
		if err != nil || len(ds) != 1 || ds[0].Tenant != "acme" {
			t.Errorf("delivery: %+v (%v), want one of tenant acme", ds, err)
		}
	},
	"ATenantOfMoreThan200CharactersIsRefused": func(t *testing.T, h *harness) {
		long := string(make([]byte, 201))
		_, err := h.s.Enqueue(h.ctx, []task.NewTask{{Kind: "k", Tenant: long}})
		wantErr(t, err, task.ErrInvalid)
	},
	"ClaimSkipsQueuesAndTenants": func(t *testing.T, h *harness) {
		h.enqueue(task.NewTask{Kind: "k", Queue: "full"}, task.NewTask{Kind: "k", Tenant: "busy"},
			task.NewTask{Kind: "k", Queue: "q", Tenant: "idle"})
		req := store.ClaimRequest{SkipQueues: []string{"full"}, SkipTenants: []string{"busy"}}
		if _, ok, err := h.s.NextDue(h.ctx, req); err != nil || !ok {
			t.Errorf("next due outside the skipped: %v (%v), want the one task", ok, err)
		}
		req.Limit = 10
		got := h.claim(req)
		if len(got) != 1 || got[0].Queue != "q" || got[0].Tenant != "idle" {
			t.Fatalf("claimed %+v, want the one task outside the skipped queue and tenant", got)
		}
		if _, ok, err := h.s.NextDue(h.ctx, req); err != nil || ok {
			t.Errorf("next due outside the skipped, all claimed: %v (%v), want none", ok, err)
		}
		if _, ok, err := h.s.NextDue(h.ctx, store.ClaimRequest{Tenant: "busy"}); err != nil || !ok {
			t.Errorf("next due of tenant busy: %v (%v), want its task", ok, err)
		}
		if got := h.claim(store.ClaimRequest{Limit: 10, Tenant: "busy"}); len(got) != 1 || got[0].Tenant != "busy" {
			t.Errorf("claim of tenant busy alone: %+v, want its one task", got)
		}
		if got := h.claim(store.ClaimRequest{Limit: 10}); len(got) != 1 || got[0].Queue != "full" {
			t.Errorf("claim without skipping: %+v, want the one task left, of queue full", got)
		}
	},
	"LimitsAreSetListedCountedAndRemoved": func(t *testing.T, h *harness) {
		if ls, err := h.s.Limits(h.ctx); err != nil || len(ls) != 0 {
			t.Fatalf("limits of a new store: %v (%v)", ls, err)
		}
		for _, s := range []store.Limit{{Scope: store.ScopeQueue, Name: "mail", Max: 5}, {Scope: store.ScopeTenant, Name: "acme", Max: 1},
			{Scope: store.ScopeQueue, Name: "mail", Max: 2}} {
			if err := h.s.SetLimit(h.ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		h.enqueue(task.NewTask{Kind: "k", Queue: "mail", Tenant: "acme"}, task.NewTask{Kind: "k", Queue: "mail"},
			task.NewTask{Kind: "k", Tenant: "acme"}, task.NewTask{Kind: "k", Queue: "mail"})
		h.claim(store.ClaimRequest{Limit: 3})
		ls, err := h.s.Limits(h.ctx)
		want := []store.Limit{{Scope: store.ScopeQueue, Name: "mail", Max: 2, Running: 2}, {Scope: store.ScopeTenant, Name: "acme", Max: 1, Running: 2}}
		if err != nil || len(ls) != 2 || ls[0] != want[0] || ls[1] != want[1] {
			t.Errorf("limits: %+v (%v), want %+v", ls, err, want)
		}
		run, err := h.s.Running(h.ctx, store.ScopeTenant, []string{"acme", "nobody"})
		if err != nil || len(run) != 1 || len(run["acme"]) != 2 {
			t.Errorf("running by tenant: %v (%v), want acme: 2", run, err)
		}
		if run, err := h.s.Running(h.ctx, store.ScopeQueue, []string{"mail"}); err != nil || len(run["mail"]) != 2 {
			t.Errorf("running by queue: %v (%v), want mail: 2", run, err)
		}
		if run, err := h.s.Running(h.ctx, store.ScopeGroup, []string{"", "api"}); err != nil || len(run[""]) != 3 || len(run) != 1 {
			t.Errorf("running by group: %v (%v), want the 3 of no group", run, err)
		}
		if err := h.s.SetLimit(h.ctx, store.Limit{Scope: store.ScopeQueue, Name: "mail"}); err != nil {
			t.Fatal(err)
		}
		if ls, err := h.s.Limits(h.ctx); err != nil || len(ls) != 1 || ls[0].Scope != store.ScopeTenant {
			t.Errorf("limits after removing the queue's: %+v (%v), want the tenant's alone", ls, err)
		}
	},
	"RunningListsEachScopeInClaimOrder": func(t *testing.T, h *harness) {
		ts := h.enqueue(task.NewTask{Kind: "k", Queue: "mail", Tenant: "acme"}, task.NewTask{Kind: "k", Queue: "mail", Tenant: "acme"},
			task.NewTask{Kind: "k", Queue: "mail", Tenant: "acme", Priority: 5})
		// Claimed in another order than the ids': the last enqueued first
		// (its priority), then the first. The pause keeps the two claims'
		// start times apart on a store clock of microseconds.
		first := h.claim(store.ClaimRequest{Limit: 1})
		time.Sleep(5 * time.Millisecond)
		second := h.claim(store.ClaimRequest{Limit: 1})
		if len(first) != 1 || first[0].ID != ts[2].ID || len(second) != 1 || second[0].ID != ts[0].ID {
			t.Fatalf("claims %v then %v: want task %d (priority 5), then %d", first, second, ts[2].ID, ts[0].ID)
		}
		want := []int64{ts[2].ID, ts[0].ID}
		for _, c := range []struct {
			scope store.Scope
			name  string
		}{{store.ScopeQueue, "mail"}, {store.ScopeTenant, "acme"}} {
			run, err := h.s.Running(h.ctx, c.scope, []string{c.name})
			if err != nil || !slices.Equal(run[c.name], want) {
				t.Errorf("running of %s %s: %v (%v), want %v (claim order)", c.scope, c.name, run, err, want)
			}
		}
	},
	"BadLimitsAreRefused": func(t *testing.T, h *harness) {
		for _, bad := range []store.Limit{{Scope: "group", Name: "g", Max: 1}, {Scope: store.ScopeQueue, Max: 1},
			{Scope: store.ScopeTenant, Name: "t", Max: -1}} {
			if err := h.s.SetLimit(h.ctx, bad); !errors.Is(err, task.ErrInvalid) {
				t.Errorf("SetLimit(%+v): %v, want task.ErrInvalid", bad, err)
			}
		}
		if _, err := h.s.Running(h.ctx, "kind", []string{"k"}); !errors.Is(err, task.ErrInvalid) {
			t.Errorf("Running by kind: %v, want task.ErrInvalid", err)
		}
		if ls, err := h.s.Limits(h.ctx); err != nil || len(ls) != 0 {
			t.Errorf("limits after bad sets: %v (%v), want none", ls, err)
		}
	},
}
