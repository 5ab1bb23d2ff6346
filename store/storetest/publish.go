package storetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// publisher is the harness's store as a store.Publisher.
func (h *harness) publisher() store.Publisher {
	h.t.Helper()
	return h.s
}

func (h *harness) subscribe(subs ...task.Subscription) store.Publisher {
	h.t.Helper()
	p := h.publisher()
	for _, s := range subs {
		if err := p.Subscribe(h.ctx, s); err != nil {
			h.t.Fatalf("subscribe %+v: %v", s, err)
		}
	}
	return p
}

// deliveries are the tasks of kind in the store, oldest first.
func (h *harness) deliveries(kind string) []task.Task {
	h.t.Helper()
	ts, err := h.s.ListTasks(h.ctx, task.Filter{Kind: kind})
	if err != nil {
		h.t.Fatalf("list %s: %v", kind, err)
	}
	slices.SortFunc(ts, func(a, b task.Task) int { return int(a.ID - b.ID) })
	return ts
}

// endOne claims one due task of a kind and finishes it in a state.
func (h *harness) endOne(kind string, state task.State) {
	h.t.Helper()
	got := h.claim(store.ClaimRequest{Kinds: []string{kind}, Limit: 1})
	if len(got) != 1 {
		h.t.Fatalf("claim one task of kind %q: got %d", kind, len(got))
	}
	h.end(got[0], state)
}

var publishTests = map[string]func(*testing.T, *harness){
	"SubscribeIsIdempotentAndListed": func(t *testing.T, h *harness) {
		a := task.Subscription{Topic: "orders.paid", Kind: "ship"}
		p := h.subscribe(a, a, task.Subscription{Topic: "orders.paid", Kind: "mail", Queue: "low"},
			task.Subscription{Topic: "ingest.ready", Kind: "hook"})
		got, err := p.Subscriptions(h.ctx, "orders.paid")
		want := []task.Subscription{{Topic: "orders.paid", Kind: "mail", Queue: "low"}, {Topic: "orders.paid", Kind: "ship", Queue: "default"}}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("subscriptions of orders.paid = %v (%v), want %v", got, err, want)
		}
		if all, _ := p.Subscriptions(h.ctx, ""); len(all) != 3 || all[0].Topic != "ingest.ready" {
			t.Errorf("every subscription = %v, want 3, by topic", all)
		}
		if err := p.Unsubscribe(h.ctx, a); err != nil {
			t.Fatal(err)
		}
		if got, _ := p.Subscriptions(h.ctx, "orders.paid"); len(got) != 1 || got[0].Kind != "mail" {
			t.Errorf("after unsubscribing ship: %v", got)
		}
	},
	"PublishDeliversToEachSubscriber": func(t *testing.T, h *harness) {
		p := h.subscribe(task.Subscription{Topic: "t", Kind: "a"}, task.Subscription{Topic: "t", Kind: "b", Queue: "q2", Group: "api"},
			task.Subscription{Topic: "other", Kind: "c"})
		got, err := p.Publish(h.ctx, []task.Event{{Topic: "t", Payload: []byte(`{"n":1}`)}})
		if err != nil || len(got) != 2 {
			t.Fatalf("publish: %d deliveries (%v), want 2", len(got), err)
		}
		for _, d := range append(h.deliveries("a"), h.deliveries("b")...) {
			if d.State != task.Ready || string(d.Args) != `{"n":1}` || d.Queue != map[string]string{"a": "default", "b": "q2"}[d.Kind] ||
				d.Group != map[string]string{"a": "", "b": "api"}[d.Kind] {
				t.Errorf("delivery %+v, want READY with the payload, in the subscriber's queue and group", d)
			}
		}
		if len(h.deliveries("c")) != 0 {
			t.Error("a subscriber of another topic got a delivery")
		}
		if got, err := p.Publish(h.ctx, []task.Event{{Topic: "nobody"}}); err != nil || len(got) != 0 {
			t.Errorf("an event without subscribers: %v (%v), want no delivery", got, err)
		}
	},
	"PublishWithAKeyDeliversOnce": func(t *testing.T, h *harness) {
		p := h.subscribe(task.Subscription{Topic: "t", Kind: "a"})
		ev := task.Event{Topic: "t", Key: "order-42", Payload: []byte(`1`)}
		first, _ := p.Publish(h.ctx, []task.Event{ev})
		again, err := p.Publish(h.ctx, []task.Event{ev})
		if err != nil || len(first) != 1 || len(again) != 1 || first[0].ID != again[0].ID {
			t.Fatalf("published twice with one key: %v then %v (%v), want the same delivery", first, again, err)
		}
		h.subscribe(task.Subscription{Topic: "t", Kind: "b"})
		if _, err := p.Publish(h.ctx, []task.Event{ev}); err != nil {
			t.Fatal(err)
		}
		if len(h.deliveries("a")) != 1 || len(h.deliveries("b")) != 1 {
			t.Errorf("a has %d deliveries and the new subscriber b %d, want 1 each", len(h.deliveries("a")), len(h.deliveries("b")))
		}
	},
	"BadEventsAreRejectedAndWriteNothing": func(t *testing.T, h *harness) {
		p := h.subscribe(task.Subscription{Topic: "t", Kind: "a"})
		for _, evs := range [][]task.Event{
			{{Topic: "t"}, {Topic: "has space"}},
			{{Topic: "t", Payload: []byte(`{not json`)}},
			{{Topic: ""}},
		} {
			if _, err := p.Publish(h.ctx, evs); !errors.Is(err, task.ErrInvalid) {
				t.Errorf("publish %v: error %v, want ErrInvalid", evs, err)
			}
		}
		if err := p.Subscribe(h.ctx, task.Subscription{Topic: "t"}); !errors.Is(err, task.ErrInvalid) {
			t.Errorf("a subscription without a kind: %v, want ErrInvalid", err)
		}
		if n := len(h.deliveries("a")); n != 0 {
			t.Errorf("%d deliveries after rejected publishes", n)
		}
	},
	"FinishPublishesWithTheSuccess": func(t *testing.T, h *harness) {
		h.subscribe(task.Subscription{Topic: "done", Kind: "next"})
		h.enqueue(job("k"))
		c := h.take("k")
		errs := h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Success,
			Publish: []task.Event{{Topic: "done", Payload: []byte(`{"from":1}`)}, {Topic: "done", Payload: []byte(`{"from":2}`)}}})
		if errs[0] != nil {
			t.Fatal(errs[0])
		}
		if ds := h.deliveries("next"); len(ds) != 2 || ds[0].State != task.Ready || string(ds[1].Args) != `{"from":2}` {
			t.Errorf("deliveries %v, want two READY", ds)
		}
	},
	"FinishThatLostItsLeasePublishesNothing": func(t *testing.T, h *harness) {
		h.subscribe(task.Subscription{Topic: "done", Kind: "next"})
		h.enqueue(job("k"))
		c := h.take("k")
		errs := h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken - 1, State: task.Success,
			Publish: []task.Event{{Topic: "done"}}})
		if !errors.Is(errs[0], task.ErrLeaseLost) || len(h.deliveries("next")) != 0 {
			t.Errorf("error %v and %d deliveries, want ErrLeaseLost and none", errs[0], len(h.deliveries("next")))
		}
	},
	"DeliveriesJoinThePublishersRun": func(t *testing.T, h *harness) {
		h.subscribe(task.Subscription{Topic: "batch.ready", Kind: "hook"})
		r := h.submit(task.NewRun{Name: "ingest", Tasks: []task.NewTask{node("start")}})
		c := h.take("start")
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Success,
			Publish: []task.Event{{Topic: "batch.ready", Payload: []byte(`1`)}, {Topic: "batch.ready", Payload: []byte(`2`)}}})
		ds := h.deliveries("hook")
		if len(ds) != 2 || ds[0].RunID != r.ID || ds[1].RunID != r.ID {
			t.Fatalf("deliveries %v, want two in run %d", ds, r.ID)
		}
		if got := h.run(r.ID); got.State.Terminal() {
			t.Fatalf("run %s while its deliveries wait, want it going on", got.State)
		}
		h.endOne("hook", task.Success)
		h.endOne("hook", task.Success)
		h.wantRunState(r.ID, task.Success)
	},
	"FailedDeliveriesCountTowardTheRunsMaxFailures": func(t *testing.T, h *harness) {
		h.subscribe(task.Subscription{Topic: "batch.ready", Kind: "hook"})
		r := h.submit(task.NewRun{Name: "ingest", MaxFailures: 1, Tasks: []task.NewTask{node("start")}})
		c := h.take("start")
		var evs []task.Event
		for i := range 3 {
			evs = append(evs, task.Event{Topic: "batch.ready", Payload: []byte{'0' + byte(i)}})
		}
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Success, Publish: evs})
		h.endOne("hook", task.Failed)
		if got := h.run(r.ID); got.State.Terminal() {
			t.Fatalf("run %s after one failed delivery of max_failures 1", got.State)
		}
		h.endOne("hook", task.Failed)
		h.wantRunState(r.ID, task.Failed)
		if left := h.deliveries("hook")[2]; left.State != task.Cancelled {
			t.Errorf("the delivery not started is %s, want CANCELLED with its run", left.State)
		}
	},
	"AnEndedRunTakesNoDeliveries": func(t *testing.T, h *harness) {
		h.subscribe(task.Subscription{Topic: "batch.ready", Kind: "hook"})
		r := h.submit(task.NewRun{Name: "ingest", MaxFailures: 1, Tasks: []task.NewTask{node("a"), node("b"), node("c")}})
		a, b := h.take("a"), h.take("b")
		h.end(a, task.Failed)
		h.end(h.take("c"), task.Failed) // past max_failures: the run fails
		h.wantRunState(r.ID, task.Failed)
		errs := h.finish(store.Finish{TaskID: b.ID, Token: b.LeaseToken, State: task.Success,
			Publish: []task.Event{{Topic: "batch.ready"}}})
		if errs[0] != nil || len(h.deliveries("hook")) != 0 {
			t.Errorf("a task of the failed run published: error %v, %d deliveries, want its success kept and none", errs[0], len(h.deliveries("hook")))
		}
	},
	"OnlyASuccessPublishes": func(t *testing.T, h *harness) {
		h.subscribe(task.Subscription{Topic: "done", Kind: "next"})
		h.enqueue(job("k"))
		c := h.take("k")
		errs := h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Failed,
			Publish: []task.Event{{Topic: "done"}}})
		if !errors.Is(errs[0], task.ErrInvalid) || h.get(c.ID).State != task.Running || len(h.deliveries("next")) != 0 {
			t.Errorf("error %v, task %s, %d deliveries: want ErrInvalid, still RUNNING, none", errs[0], h.get(c.ID).State, len(h.deliveries("next")))
		}
	},
}
