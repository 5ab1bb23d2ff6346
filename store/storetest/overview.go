package storetest

import (
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// overviewTests check the optional store.Overview capability, when the
// driver has it.
var overviewTests = map[string]func(*testing.T, *harness){
	"CountsByQueueAndStateAndHeldByOwner": func(t *testing.T, h *harness) {
		o, ok := h.s.(store.Overview)
		if !ok {
			t.Skip("this driver has no store.Overview (optional)")
		}
		h.enqueue(store.NewTask{Kind: "k"}, store.NewTask{Kind: "k"}, store.NewTask{Kind: "k", Queue: "mail"})
		h.claim(store.ClaimRequest{Worker: "w1", Queues: []string{"default"}, Limit: 1, Lease: time.Minute})
		h.claim(store.ClaimRequest{Worker: "w2", Queues: []string{"mail"}, Limit: 1, Lease: time.Minute})
		cs, err := o.QueueCounts(h.ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, c := range cs {
			got[c.Queue+"/"+string(c.State)] = c.N
		}
		want := map[string]int{"default/" + string(task.Running): 1, "default/" + string(task.Ready): 1, "mail/" + string(task.Running): 1}
		if len(got) != len(want) {
			t.Fatalf("counts %v, want %v", got, want)
		}
		for k, n := range want {
			if got[k] != n {
				t.Errorf("counts %v, want %v", got, want)
			}
		}
		held, err := o.Held(h.ctx)
		if err != nil || len(held) != 2 || held["w1"] != 1 || held["w2"] != 1 {
			t.Errorf("held %v, %v; want w1 and w2 holding one each", held, err)
		}
	},
}
