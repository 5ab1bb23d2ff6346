package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func leaseOf(t task.Task) store.Lease { return store.Lease{TaskID: t.ID, Token: t.LeaseToken} }

func (h *harness) heartbeat(worker string, d time.Duration, held ...store.Lease) []store.Lease {
	h.t.Helper()
	lost, err := h.s.Heartbeat(h.ctx, worker, d, held)
	if err != nil {
		h.t.Fatalf("heartbeat: %v", err)
	}
	return lost
}

func (h *harness) rescue(req store.RescueRequest) []task.Task {
	h.t.Helper()
	if req.Worker == "" {
		req.Worker = "rescuer"
	}
	if req.Lease == 0 {
		req.Lease = lease
	}
	got, err := h.s.Rescue(h.ctx, req)
	if err != nil {
		h.t.Fatalf("rescue: %v", err)
	}
	return got
}

// expired claims a task of a kind with a short lease and waits until the
// lease has expired.
func (h *harness) expired(kind string) task.Task {
	h.t.Helper()
	got := h.claim(store.ClaimRequest{Kinds: []string{kind}, Limit: 1, Lease: shortLease})
	if len(got) != 1 {
		h.t.Fatalf("claim kind %q: got %d tasks", kind, len(got))
	}
	h.waitPast(got[0].LeaseExpires)
	return got[0]
}

var heartbeatTests = map[string]func(*testing.T, *harness){
	"RenewsHeldLeases": func(t *testing.T, h *harness) {
		h.enqueue(job("a"), job("b"))
		a, b := h.take("a"), h.take("b")
		lost := h.heartbeat("w1", 2*lease, leaseOf(a), leaseOf(b))
		if len(lost) != 0 {
			t.Errorf("lost %v, want none", lost)
		}
		floor := h.now().Add(lease + lease/2)
		for _, c := range []task.Task{a, b} {
			if got := h.get(c.ID); !got.LeaseExpires.After(floor) || got.LeaseToken != c.LeaseToken {
				t.Errorf("task %d lease expires %v, want after %v under the same token", c.ID, got.LeaseExpires, floor)
			}
		}
	},
	"RenewsAnExpiredLeaseNobodyTook": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.expired("k")
		if lost := h.heartbeat("w1", lease, leaseOf(c)); len(lost) != 0 {
			t.Errorf("lost %v, want none", lost)
		}
		if got := h.rescue(store.RescueRequest{}); len(got) != 0 {
			t.Errorf("rescued a renewed lease")
		}
	},
	"ReportsLeaseTakenByRescue": func(t *testing.T, h *harness) {
		h.enqueue(job("a"), job("b"))
		a, b := h.take("a"), h.take("b")
		h.rescue(store.RescueRequest{Owner: "w1", Limit: 1})
		lost := h.heartbeat("w1", lease, leaseOf(a), leaseOf(b))
		if len(lost) != 1 || (lost[0] != leaseOf(a) && lost[0] != leaseOf(b)) {
			t.Errorf("lost %v, want the one rescued lease", lost)
		}
	},
	"ReportsCancelledTask": func(t *testing.T, h *harness) {
		h.enqueue(job("a"), job("b"))
		a, b := h.take("a"), h.take("b")
		if _, err := h.s.Act(h.ctx, b.ID, task.ActCancel); err != nil {
			t.Fatalf("cancel: %v", err)
		}
		lost := h.heartbeat("w1", lease, leaseOf(a), leaseOf(b))
		if !slices.Equal(lost, []store.Lease{leaseOf(b)}) {
			t.Errorf("lost %v, want [%v]", lost, leaseOf(b))
		}
	},
	"ReportsFinishedTaskAndOtherOwner": func(t *testing.T, h *harness) {
		h.enqueue(job("a"), job("b"))
		a := h.endKind("a", task.Success)
		b := h.take("b")
		if lost := h.heartbeat("w1", lease, leaseOf(a)); len(lost) != 1 {
			t.Errorf("finished task: lost %v, want it", lost)
		}
		if lost := h.heartbeat("w2", lease, leaseOf(b)); len(lost) != 1 {
			t.Errorf("another worker's lease: lost %v, want it", lost)
		}
	},
	"RecordsWorkerSeen": func(t *testing.T, h *harness) {
		if err := h.s.RegisterWorker(h.ctx, task.Worker{ID: "w1", Host: "h"}); err != nil {
			t.Fatal(err)
		}
		before := h.now()
		h.waitPast(before)
		h.heartbeat("w1", lease)
		ws, err := h.s.Workers(h.ctx)
		if err != nil || len(ws) != 1 || !ws[0].LastSeen.After(before) || !ws[0].Active {
			t.Errorf("workers = %+v (%v), want w1 active, seen after %v", ws, err, before)
		}
	},
}

var rescueTests = map[string]func(*testing.T, *harness){
	"TakesExpiredLeases": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.expired("k")
		got := h.rescue(store.RescueRequest{Worker: "r1"})
		if len(got) != 1 || got[0].ID != c.ID || got[0].State != task.Running || got[0].LeaseOwner != "r1" ||
			got[0].LeaseToken <= c.LeaseToken || got[0].Attempt != c.Attempt {
			t.Errorf("rescued %+v, want task %d RUNNING under r1 with a larger token and the same attempt", got, c.ID)
		}
	},
	"LeavesLiveLeases": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		h.take("k")
		if got := h.rescue(store.RescueRequest{}); len(got) != 0 {
			t.Errorf("rescued %d live leases", len(got))
		}
	},
	"RespectsLimit": func(t *testing.T, h *harness) {
		h.enqueue(job("k"), job("k"), job("k"))
		got := h.claim(store.ClaimRequest{Limit: 3, Lease: shortLease})
		h.waitPast(got[2].LeaseExpires)
		if r := h.rescue(store.RescueRequest{Limit: 2}); len(r) != 2 {
			t.Errorf("rescued %d, want 2", len(r))
		}
	},
	"OwnerTakesEveryLeaseOfThatWorker": func(t *testing.T, h *harness) {
		h.enqueue(job("a"), job("b"), job("c"))
		h.claim(store.ClaimRequest{Worker: "dead", Kinds: []string{"a", "b"}, Limit: 2})
		h.claim(store.ClaimRequest{Worker: "alive", Kinds: []string{"c"}, Limit: 1})
		got := h.rescue(store.RescueRequest{Owner: "dead"})
		if len(got) != 2 {
			t.Fatalf("rescued %d, want the 2 live leases of dead", len(got))
		}
		for _, r := range got {
			if r.Kind == "c" || r.LeaseOwner != "rescuer" {
				t.Errorf("rescued %+v", r)
			}
		}
	},
	"ClosesAttemptAsInterruptedAndFencesOldToken": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c := h.expired("k")
		r := h.rescue(store.RescueRequest{})[0]
		if as := h.attempts(c.ID); len(as) != 1 || as[0].Outcome != task.OutcomeInterrupted || as[0].EndedAt.IsZero() {
			t.Errorf("attempts = %+v, want the one attempt INTERRUPTED", as)
		}
		wantErr(t, h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Success})[0], task.ErrLeaseLost)
		errs := h.finish(store.Finish{TaskID: c.ID, Token: r.LeaseToken, State: task.Retrying,
			Attempt: task.Attempt{Delay: time.Second, Decision: "retry"}})
		if errs[0] != nil {
			t.Fatalf("rescuer's finish: %v", errs[0])
		}
		if got := h.get(c.ID); got.State != task.Retrying {
			t.Errorf("task is %s, want RETRYING", got.State)
		}
		if as := h.attempts(c.ID); len(as) != 1 || as[0].Outcome != task.OutcomeInterrupted {
			t.Errorf("attempts after the rescuer's finish = %+v, want the INTERRUPTED one only", as)
		}
	},
	"RescuersSuccessKeepsTheInterruptedAttempt": func(t *testing.T, h *harness) {
		// The rescuer's plain success ends the task; the attempt it ends
		// is the interrupted one, which keeps its outcome: the task has
		// no successful attempt to show or to time.
		h.enqueue(job("k"))
		c := h.expired("k")
		r := h.rescue(store.RescueRequest{})[0]
		if errs := h.finish(store.Finish{TaskID: c.ID, Token: r.LeaseToken, State: task.Success}); errs[0] != nil {
			t.Fatalf("rescuer's finish: %v", errs[0])
		}
		if got := h.get(c.ID); got.State != task.Success {
			t.Errorf("task is %s, want SUCCESS", got.State)
		}
		as := h.attempts(c.ID)
		if len(as) != 1 || as[0].Outcome != task.OutcomeInterrupted || as[0].LeaseToken != c.LeaseToken || as[0].Worker != "w1" {
			t.Errorf("attempts = %+v, want w1's INTERRUPTED one only", as)
		}
		if ds, err := h.s.SuccessDurations(h.ctx, "k", "", 10); err != nil || len(ds) != 0 {
			t.Errorf("success durations %v (%v), want none", ds, err)
		}
	},
	"SecondRescueWritesNoSecondAttempt": func(t *testing.T, h *harness) {
		// A rescuer that dies before it finishes leaves the task to the
		// next rescue, which has no attempt of its own to close.
		h.enqueue(job("k"))
		c := h.expired("k")
		r := h.rescue(store.RescueRequest{Lease: shortLease})[0]
		h.waitPast(r.LeaseExpires)
		r2 := h.rescue(store.RescueRequest{Worker: "rescuer2"})
		if len(r2) != 1 || r2[0].LeaseToken <= r.LeaseToken {
			t.Fatalf("second rescue took %+v, want task %d under a larger token", r2, c.ID)
		}
		if as := h.attempts(c.ID); len(as) != 1 || as[0].Outcome != task.OutcomeInterrupted || as[0].LeaseToken != c.LeaseToken {
			t.Errorf("attempts = %+v, want the first INTERRUPTED one only", as)
		}
	},
	"MarksSilentWorkersInactive": func(t *testing.T, h *harness) {
		if err := h.s.RegisterWorker(h.ctx, task.Worker{ID: "quiet"}); err != nil {
			t.Fatal(err)
		}
		h.waitPast(h.now().Add(shortLease))
		h.rescue(store.RescueRequest{Lease: shortLease})
		ws, err := h.s.Workers(h.ctx)
		if err != nil || len(ws) != 1 || ws[0].Active {
			t.Errorf("workers = %+v (%v), want quiet inactive", ws, err)
		}
	},
}
