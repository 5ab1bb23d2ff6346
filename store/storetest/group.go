package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

var groupTests = map[string]func(*testing.T, *harness){
	"UpdateGroupCountsTheRunningOfALimitedGroup": func(t *testing.T, h *harness) {
		if _, err := h.s.UpdateGroup(h.ctx, "api", func(g *store.Group) { g.Limit = 2 }); err != nil {
			t.Fatal(err)
		}
		h.enqueue(task.NewTask{Kind: "k", Group: "api"}, task.NewTask{Kind: "k", Group: "api"}, task.NewTask{Kind: "k", Group: "api"},
			task.NewTask{Kind: "k", Group: "other"})
		h.claim(store.ClaimRequest{Limit: 2, Group: "api"})
		h.claim(store.ClaimRequest{Limit: 1, Group: "other"})
		var seen int
		g, err := h.s.UpdateGroup(h.ctx, "api", func(g *store.Group) { seen = len(g.RunningIDs) })
		if err != nil || seen != 2 || g.Limit != 2 {
			t.Errorf("running seen %d, limit %d (%v): want the 2 running tasks of the group, limit 2", seen, g.Limit, err)
		}
	},
	"UpdateGroupListsTheRunningInClaimOrder": func(t *testing.T, h *harness) {
		if _, err := h.s.UpdateGroup(h.ctx, "api", func(g *store.Group) { g.Limit = 1 }); err != nil {
			t.Fatal(err)
		}
		ts := h.enqueue(task.NewTask{Kind: "k", Group: "api"}, task.NewTask{Kind: "k", Group: "api"},
			task.NewTask{Kind: "k", Group: "api", Priority: 5})
		// Claimed in another order than the ids': the last enqueued first
		// (its priority), then the first. The pause keeps the two claims'
		// start times apart on a store clock of microseconds.
		first := h.claim(store.ClaimRequest{Limit: 1, Group: "api"})
		time.Sleep(5 * time.Millisecond)
		second := h.claim(store.ClaimRequest{Limit: 1, Group: "api"})
		if len(first) != 1 || first[0].ID != ts[2].ID || len(second) != 1 || second[0].ID != ts[0].ID {
			t.Fatalf("claims %v then %v: want task %d (priority 5), then %d", first, second, ts[2].ID, ts[0].ID)
		}
		var ids []int64
		if _, err := h.s.UpdateGroup(h.ctx, "api", func(g *store.Group) { ids = g.RunningIDs }); err != nil {
			t.Fatal(err)
		}
		if len(ids) != 2 || ids[0] != ts[2].ID || ids[1] != ts[0].ID {
			t.Errorf("running in order %v; want 2: %d, then %d (claim order)", ids, ts[2].ID, ts[0].ID)
		}
	},
	"ClaimSkipsGroupsOrTakesOne": func(t *testing.T, h *harness) {
		h.enqueue(task.NewTask{Kind: "k", Group: "down"}, task.NewTask{Kind: "k", Group: "up"}, task.NewTask{Kind: "k"})
		got := h.claim(store.ClaimRequest{Limit: 10, SkipGroups: []string{"down"}})
		if len(got) != 2 {
			t.Fatalf("claimed %d tasks, want the 2 outside the skipped group", len(got))
		}
		for _, c := range got {
			if c.Group == "down" {
				t.Errorf("claimed task %d of the skipped group", c.ID)
			}
		}
		if at, ok, err := h.s.NextDue(h.ctx, store.ClaimRequest{SkipGroups: []string{"down"}}); err != nil || ok {
			t.Errorf("next due outside the skipped group: %v %v (%v), want none", at, ok, err)
		}
		if _, ok, _ := h.s.NextDue(h.ctx, store.ClaimRequest{}); !ok {
			t.Error("next due without skipping: none, want the skipped group's task")
		}
		if _, ok, _ := h.s.NextDue(h.ctx, store.ClaimRequest{Group: "down"}); !ok {
			t.Error("next due of the group: none, want its task")
		}
		if got := h.claim(store.ClaimRequest{Limit: 10, Group: "down"}); len(got) != 1 || got[0].Group != "down" || got[0].State != task.Running {
			t.Errorf("claim of the group alone: %v, want its one task", got)
		}
	},
	"GroupsAreKeptAndChangedOneAtATime": func(t *testing.T, h *harness) {
		if gs, err := h.s.Groups(h.ctx); err != nil || len(gs) != 0 {
			t.Fatalf("groups of a new store: %v (%v)", gs, err)
		}
		now := h.now()
		var s breaker.Settings
		set := breaker.Settings{MinAttempts: 5, CoolDown: time.Minute}
		g, err := h.s.UpdateGroup(h.ctx, "payments-api", func(g *store.Group) {
			s.Trip(&g.Circuit, now, time.Hour)
			g.Settings, g.FailFast = &set, true
		})
		if err != nil || g.Circuit.State != breaker.Open {
			t.Fatalf("trip: %+v (%v)", g, err)
		}
		const n = 8
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if _, err := h.s.UpdateGroup(h.ctx, "payments-api", func(g *store.Group) { g.Circuit.Opens++ }); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		gs, err := h.s.Groups(h.ctx)
		got := gs["payments-api"]
		if err != nil || got.Circuit.State != breaker.Open || got.Circuit.Opens != n+1 || !got.Circuit.NextProbe().Equal(now.Add(time.Hour)) ||
			got.Settings == nil || *got.Settings != set || !got.FailFast {
			t.Errorf("group after %d concurrent changes: %+v (%v), want open, %d opens, next probe %v, its settings, fail-fast", n, got, err, n+1, now.Add(time.Hour))
		}
		if _, err := h.s.UpdateGroup(h.ctx, "", func(*store.Group) {}); err == nil {
			t.Error("the empty group was accepted")
		}
	},
}
