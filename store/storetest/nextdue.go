package storetest

import (
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func (h *harness) nextDue(queues, kinds []string) (time.Time, bool) {
	h.t.Helper()
	at, ok, err := h.s.NextDue(h.ctx, store.ClaimRequest{Queues: queues, Kinds: kinds})
	if err != nil {
		h.t.Fatalf("next due: %v", err)
	}
	return at, ok
}

var nextDueTests = map[string]func(*testing.T, *harness){
	"NoneWhenNothingWaits": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		h.take("k")
		if at, ok := h.nextDue(nil, nil); ok {
			t.Errorf("next due %v with nothing waiting", at)
		}
	},
	"EarliestWaitingTask": func(t *testing.T, h *harness) {
		now := h.now()
		h.enqueue(task.NewTask{Kind: "k", RunAt: now.Add(2 * time.Hour)}, task.NewTask{Kind: "k", RunAt: now.Add(time.Hour)})
		if at, ok := h.nextDue(nil, nil); !ok || !near(at, now.Add(time.Hour)) {
			t.Errorf("next due %v %v, want %v", at, ok, now.Add(time.Hour))
		}
	},
	"CountsRetryingAndSensing": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.take("k")
		next := h.now().Add(time.Hour)
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Sensing, NextAt: next, Refund: true})
		if at, ok := h.nextDue(nil, nil); !ok || !near(at, next) {
			t.Errorf("next due %v %v, want %v", at, ok, next)
		}
	},
	"RespectsRun": func(t *testing.T, h *harness) {
		now := h.now()
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{{Name: "a", Kind: "k", RunAt: now.Add(2 * time.Hour)}}})
		h.submit(task.NewRun{Name: "other", Tasks: []task.NewTask{{Name: "a", Kind: "k", RunAt: now.Add(time.Hour)}}})
		h.enqueue(task.NewTask{Kind: "k", RunAt: now.Add(time.Minute)})
		at, ok, err := h.s.NextDue(h.ctx, store.ClaimRequest{Run: r.ID})
		if err != nil || !ok || !near(at, now.Add(2*time.Hour)) {
			t.Errorf("next due of run %d: %v %v %v, want %v (its own task's, not the other run's or a task in no run)", r.ID, at, ok, err, now.Add(2*time.Hour))
		}
	},
	"RespectsQueuesAndKinds": func(t *testing.T, h *harness) {
		now := h.now()
		h.enqueue(
			task.NewTask{Kind: "k", Queue: "a", RunAt: now.Add(time.Hour)},
			task.NewTask{Kind: "k", Queue: "b", RunAt: now.Add(2 * time.Hour)},
			task.NewTask{Kind: "j", Queue: "b", RunAt: now.Add(3 * time.Hour)},
		)
		if at, _ := h.nextDue([]string{"b"}, nil); !near(at, now.Add(2*time.Hour)) {
			t.Errorf("queue b: next due %v, want in 2h", at)
		}
		if at, _ := h.nextDue([]string{"b"}, []string{"j"}); !near(at, now.Add(3*time.Hour)) {
			t.Errorf("queue b kind j: next due %v, want in 3h", at)
		}
		if _, ok := h.nextDue([]string{"c"}, nil); ok {
			t.Errorf("queue c has a due time")
		}
	},
	"IgnoresPendingTasks": func(t *testing.T, h *harness) {
		h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a")}})
		h.take("a")
		if at, ok := h.nextDue(nil, nil); ok {
			t.Errorf("next due %v, want none: b is PENDING", at)
		}
	},
}
