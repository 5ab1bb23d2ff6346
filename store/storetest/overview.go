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
		h.enqueue(task.NewTask{Kind: "k"}, task.NewTask{Kind: "k"}, task.NewTask{Kind: "k", Queue: "mail"})
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

// enqueuesTests check the optional store.Enqueues capability.
var enqueuesTests = map[string]func(*testing.T, *harness){
	"CountsEveryTaskEnqueued": func(t *testing.T, h *harness) {
		e, ok := h.s.(store.Enqueues)
		if !ok {
			t.Skip("this driver has no store.Enqueues (optional)")
		}
		total := func() int64 {
			n, err := e.EnqueuedTotal(h.ctx)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := total(); n != 0 {
			t.Errorf("a new store counts %d tasks enqueued, want 0", n)
		}
		h.enqueue(task.NewTask{Kind: "k"}, task.NewTask{Kind: "k", Queue: "mail"})
		if _, err := h.s.SubmitRun(h.ctx, task.NewRun{Name: "r", Tasks: []task.NewTask{{Name: "a", Kind: "k"}}}); err != nil {
			t.Fatal(err)
		}
		done := h.claim(store.ClaimRequest{Worker: "w", Limit: 3, Lease: time.Minute})
		for _, c := range done {
			h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Success})
		}
		if n := total(); n != 3 {
			t.Errorf("%d tasks enqueued and submitted, then worked: counted %d, want 3", 3, n)
		}
	},
}

// backlogTests check the optional store.Backlog capability.
var backlogTests = map[string]func(*testing.T, *harness){
	"DueKindsOfTheWorkDueTheLongest": dueKindsTest,
	"OldestDueByQueueSkipsWhatIsNotDue": func(t *testing.T, h *harness) {
		b, ok := h.s.(store.Backlog)
		if !ok {
			t.Skip("this driver has no store.Backlog (optional)")
		}
		past := h.now().Add(-time.Hour).Truncate(time.Millisecond)
		h.enqueue(
			task.NewTask{Kind: "k", RunAt: past.Add(time.Minute)},
			task.NewTask{Kind: "k", RunAt: past}, // the oldest of default
			task.NewTask{Kind: "k", Queue: "mail", RunAt: past.Add(2 * time.Minute)},
			task.NewTask{Kind: "k", Queue: "later", RunAt: h.now().Add(time.Hour)}, // not due
		)
		// A claimed task is not waiting, however long it was due.
		h.enqueue(task.NewTask{Kind: "k", Queue: "busy", RunAt: past})
		h.claim(store.ClaimRequest{Worker: "w", Queues: []string{"busy"}, Limit: 1, Lease: time.Minute})
		got, err := b.OldestDue(h.ctx, []string{"default", "mail", "later", "busy", "none"})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]time.Time{"default": past, "mail": past.Add(2 * time.Minute)}
		if len(got) != len(want) {
			t.Fatalf("oldest due %v, want %v", got, want)
		}
		for q, at := range want {
			if !got[q].Equal(at) {
				t.Errorf("queue %s: oldest due %v, want %v", q, got[q], at)
			}
		}
	},
}

// dueKindsTest checks store.Backlog's DueKinds: the kinds of the tasks
// due the longest, with their counts and oldest due time.
func dueKindsTest(t *testing.T, h *harness) {
	b, ok := h.s.(store.Backlog)
	if !ok {
		t.Skip("this driver has no store.Backlog (optional)")
	}
	now := h.now()
	past := now.Add(-10 * time.Minute)
	h.enqueue(
		task.NewTask{Kind: "resize", RunAt: past}, task.NewTask{Kind: "resize", RunAt: past.Add(time.Minute)},
		task.NewTask{Kind: "send", RunAt: past.Add(2 * time.Minute)},
		task.NewTask{Kind: "fresh", RunAt: now}, // due, but not waited long
		task.NewTask{Kind: "later", RunAt: now.Add(time.Hour)},
		task.NewTask{Kind: "taken", RunAt: past.Add(-time.Minute)},
	)
	h.claim(store.ClaimRequest{Worker: "w", Kinds: []string{"taken"}, Limit: 1, Lease: time.Minute})
	got, err := b.DueKinds(h.ctx, now.Add(-time.Minute), 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.KindDue{{Kind: "resize", Tasks: 2, Oldest: past}, {Kind: "send", Tasks: 1, Oldest: past.Add(2 * time.Minute)}}
	if len(got) != len(want) {
		t.Fatalf("due kinds %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Kind != want[i].Kind || got[i].Tasks != want[i].Tasks || !got[i].Oldest.Equal(want[i].Oldest) {
			t.Errorf("due kinds %+v, want %+v", got, want)
		}
	}
	// The limit bounds the walk: the oldest task alone.
	if got, err := b.DueKinds(h.ctx, now.Add(-time.Minute), 1); err != nil || len(got) != 1 || got[0].Kind != "resize" || got[0].Tasks != 1 {
		t.Errorf("due kinds of the one due the longest: %+v, %v", got, err)
	}
}

// pollTests check the optional store.PollReporter capability.
var pollTests = map[string]func(*testing.T, *harness){
	"ReportedClaimErrorsShowOnTheWorker": func(t *testing.T, h *harness) {
		r, ok := h.s.(store.PollReporter)
		if !ok {
			t.Skip("this driver has no store.PollReporter (optional)")
		}
		if err := h.s.RegisterWorker(h.ctx, task.Worker{ID: "w", PID: 1}); err != nil {
			t.Fatal(err)
		}
		if err := r.ReportPoll(h.ctx, "w", "connection refused", 3); err != nil {
			t.Fatal(err)
		}
		ws := h.workers()
		if ws[0].LastError != "connection refused" || ws[0].Failures != 3 || ws[0].LastErrorAt.IsZero() {
			t.Errorf("worker %+v; want the reported error, 3 failures and a time", ws[0])
		}
		if err := r.ReportPoll(h.ctx, "w", "connection refused", 0); err != nil {
			t.Fatal(err)
		}
		if ws := h.workers(); ws[0].Failures != 0 || ws[0].LastError != "connection refused" {
			t.Errorf("after recovery %+v; want 0 failures and the last error kept", ws[0])
		}
	},
}
