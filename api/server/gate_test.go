package server_test

import (
	"strings"
	"testing"
	"time"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func (h *harness) group(t *testing.T, name string, fn func(*store.Group)) store.Group {
	t.Helper()
	g, err := h.store.UpdateGroup(ctx(t), name, fn)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// claimAll claims what a remote worker gets of kind now, waiting up to
// wait for something.
func (h *harness) claimAll(t *testing.T, worker string, wait time.Duration) []*pb.Task {
	t.Helper()
	r, err := h.workers.Claim(ctx(t), &pb.ClaimRequest{WorkerId: worker, Kinds: []string{"call"}, Limit: 10, Wait: dpb(wait)})
	if err != nil {
		t.Fatal(err)
	}
	return r.GetTasks()
}

// TestRemoteClaimsKeepToTheBreakers: a remote worker gets no task of a
// group whose breaker is open; once it may probe, it gets one task as the
// probe, and the probe's success closes the breaker for everyone; remote
// failures count in the group's breaker and open it.
func TestRemoteClaimsKeepToTheBreakers(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	one := breaker.Settings{Probes: 1, Consecutive: 2, CoolDown: time.Second} // longer than the first claims take, even under -race
	h.group(t, "api", func(g *store.Group) {
		g.Settings = &one
		one.Trip(&g.Circuit, time.Now(), 0)
	})
	for range 3 {
		h.enqueue(t, &pb.NewTask{Kind: "call", Group: "api", Policy: "5 10ms"})
	}
	plain := h.enqueue(t, &pb.NewTask{Kind: "call"})
	if got := h.claimAll(t, "w", 0); len(got) != 1 || got[0].GetId() != plain.GetId() {
		t.Fatalf("claimed %v while the group's breaker is open, want the ungrouped task alone", got)
	}
	probe := h.claimAll(t, "w", 5*time.Second)
	if len(probe) != 1 || probe[0].GetGroup() != "api" {
		t.Fatalf("after the cool-down: %v, want one task of the group, its probe", probe)
	}
	if g := h.group(t, "api", func(*store.Group) {}); g.Circuit.State != breaker.HalfOpen {
		t.Errorf("breaker %s while its probe runs, want half-open", g.Circuit.State)
	}
	if _, err := h.workers.Complete(ctx(t), &pb.CompleteRequest{TaskId: probe[0].GetId(), WorkerId: probe[0].GetLeaseOwner(), LeaseToken: probe[0].GetLeaseToken()}); err != nil {
		t.Fatal(err)
	}
	if g := h.group(t, "api", func(*store.Group) {}); g.Circuit.State != breaker.Closed {
		t.Fatalf("breaker %s after its probe succeeded, want closed", g.Circuit.State)
	}
	var rest []*pb.Task
	for deadline := time.Now().Add(10 * time.Second); len(rest) < 2 && time.Now().Before(deadline); {
		rest = append(rest, h.claimAll(t, "w", time.Second)...) // closed, it ramps up
	}
	if len(rest) != 2 {
		t.Fatalf("claimed %d of the group's 2 other tasks once closed", len(rest))
	}
	for _, tk := range rest {
		if _, err := h.workers.Fail(ctx(t), &pb.FailRequest{TaskId: tk.GetId(), WorkerId: tk.GetLeaseOwner(), LeaseToken: tk.GetLeaseToken(),
			ErrorClass: pb.ErrorClass_ERROR_CLASS_TRANSIENT, Message: "503 from api"}); err != nil {
			t.Fatal(err)
		}
	}
	if g := h.group(t, "api", func(*store.Group) {}); g.Circuit.State != breaker.Open {
		t.Errorf("breaker %s after two remote failures in a row, want open (consecutive 2)", g.Circuit.State)
	}
}

// TestRemoteClaimsKeepToTheLimits: a tenant limited to one running
// attempt gets one at a time through remote claims too, the rest waiting
// with no attempt used.
func TestRemoteClaimsKeepToTheLimits(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	if err := h.store.SetLimit(ctx(t), store.Limit{Scope: store.ScopeTenant, Name: "acme", Max: 1}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		h.enqueue(t, &pb.NewTask{Kind: "call", Tenant: "acme"})
	}
	first := h.claimAll(t, "w", 0)
	if len(first) != 1 {
		t.Fatalf("claimed %d of tenant acme's tasks at once, want 1 (its limit)", len(first))
	}
	if got := h.claimAll(t, "w2", 0); len(got) != 0 {
		t.Errorf("a second worker claimed %v while acme is at its limit", got)
	}
	if _, err := h.workers.Complete(ctx(t), &pb.CompleteRequest{TaskId: first[0].GetId(), WorkerId: first[0].GetLeaseOwner(), LeaseToken: first[0].GetLeaseToken()}); err != nil {
		t.Fatal(err)
	}
	next := h.claimAll(t, "w", 5*time.Second)
	if len(next) != 1 || next[0].GetAttempt() != 1 {
		t.Errorf("after the first ended: %v, want one more, on its first attempt", next)
	}
}

// TestRemoteFailFastGroupFailsAtOnce: while the breaker of a group that
// fails fast is open and cooling down, a remote worker's claim fails the
// group's tasks at once, for good, as a Go worker does, instead of
// leaving them to wait; the worker gets the other tasks. A group that does
// not fail fast keeps its tasks waiting.
func TestRemoteFailFastGroupFailsAtOnce(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	slow := breaker.Settings{CoolDown: time.Hour}
	for _, name := range []string{"fast", "waits"} {
		h.group(t, name, func(g *store.Group) {
			g.Settings, g.FailFast = &slow, name == "fast"
			slow.Trip(&g.Circuit, time.Now(), 0)
		})
	}
	fast := h.enqueue(t, &pb.NewTask{Kind: "call", Group: "fast", Policy: "5 10ms"})
	waits := h.enqueue(t, &pb.NewTask{Kind: "call", Group: "waits", Policy: "5 10ms"})
	plain := h.enqueue(t, &pb.NewTask{Kind: "call"})
	if got := h.claimAll(t, "w", 0); len(got) != 1 || got[0].GetId() != plain.GetId() {
		t.Fatalf("claimed %v while both groups' breakers are open, want the ungrouped task alone", got)
	}
	g := h.get(t, fast.GetId())
	if g.GetState() != pb.TaskState_TASK_STATE_FAILED || g.GetAttempt() != 1 || !strings.Contains(g.GetLastError(), "circuit breaker is open") {
		t.Errorf("task of the group that fails fast: %s at attempt %d, error %q; want FAILED at once, saying the breaker is open",
			g.GetState(), g.GetAttempt(), g.GetLastError())
	}
	if as := h.attempts(t, fast.GetId()); len(as) != 1 || as[0].Class != "permanent" {
		t.Errorf("its attempts %+v, want one, permanent", as)
	}
	if g := h.get(t, waits.GetId()); g.GetState() != pb.TaskState_TASK_STATE_READY || g.GetAttempt() != 0 {
		t.Errorf("task of the group that waits: %s at attempt %d, want READY, untouched", g.GetState(), g.GetAttempt())
	}
}

// TestRemoteClaimsRampUpAfterTheBreakerCloses: once a group's breaker
// closes, a remote worker gets the group's tasks at the ramp's rate, as a
// Go worker does, even when one claim could take the whole backlog: what
// passes the rate waits its turn, using no attempt.
func TestRemoteClaimsRampUpAfterTheBreakerCloses(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	ramp := breaker.Settings{RampRate: 0.1, RampUp: time.Hour}
	h.group(t, "api", func(g *store.Group) {
		g.Settings = &ramp
		ramp.Trip(&g.Circuit, time.Now(), 0)
		ramp.Close(&g.Circuit, time.Now())
	})
	var ids []int64
	for range 10 {
		ids = append(ids, h.enqueue(t, &pb.NewTask{Kind: "call", Group: "api"}).GetId())
	}
	first := h.claimAll(t, "w", 0)
	if len(first) != 1 || first[0].GetAttempt() != 1 {
		t.Fatalf("at the start of the ramp (one token, 0.1 a second): claimed %v, want one task on attempt 1", first)
	}
	r, err := h.workers.Claim(ctx(t), &pb.ClaimRequest{WorkerId: "w", Kinds: []string{"call"}, Limit: 8, Wait: dpb(300 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.GetTasks()); n != 0 {
		t.Errorf("with the ramp's token taken, the worker claimed %d more of the group, want none", n)
	}
	for _, id := range ids {
		if id == first[0].GetId() {
			continue
		}
		if g := h.get(t, id); g.GetState() != pb.TaskState_TASK_STATE_READY && g.GetState() != pb.TaskState_TASK_STATE_RETRYING || g.GetAttempt() > 1 {
			t.Errorf("task %d waiting for the ramp: %s at attempt %d, want waiting, no attempt used", id, g.GetState(), g.GetAttempt())
		}
	}
}

// TestRemoteClaimsKeepToTheRetryBudget: a group's retry budget lets only
// as many remote retries run as it has tokens; the others wait, using no
// attempt, as a Go worker's do.
func TestRemoteClaimsKeepToTheRetryBudget(t *testing.T) {
	t.Parallel()
	cfg := server.Config{}
	cfg.RetryBudget, cfg.BudgetWait = store.BudgetRates{Ratio: 0, Floor: 0, Burst: 2}, time.Hour
	// The budget alone: six tasks failing alike, none succeeding, would be
	// an outage, held and probed.
	cfg.OutageTasks = -1
	h := start(t, cfg, "")
	for range 6 {
		h.enqueue(t, &pb.NewTask{Kind: "call", Group: "api", Policy: "5 1ms 1ms"})
	}
	first := h.claimAll(t, "w", 0)
	if len(first) != 6 {
		t.Fatalf("first attempts: claimed %d, want 6", len(first))
	}
	for _, tk := range first {
		if _, err := h.workers.Fail(ctx(t), &pb.FailRequest{TaskId: tk.GetId(), WorkerId: tk.GetLeaseOwner(), LeaseToken: tk.GetLeaseToken(),
			ErrorClass: pb.ErrorClass_ERROR_CLASS_TRANSIENT, Message: "503 from api"}); err != nil {
			t.Fatal(err)
		}
	}
	var retries []*pb.Task
	for deadline := time.Now().Add(10 * time.Second); len(retries) < 2 && time.Now().Before(deadline); {
		retries = append(retries, h.claimAll(t, "w", time.Second)...)
	}
	if more := h.claimAll(t, "w", 200*time.Millisecond); len(retries) != 2 || len(more) != 0 {
		t.Fatalf("retries claimed: %d, then %d more; want 2 (a burst of 2), then none", len(retries), len(more))
	}
	released := 0
	for _, tk := range first {
		got, err := h.store.GetTask(ctx(t), tk.GetId())
		if err != nil {
			t.Fatal(err)
		}
		released += got.Waits
		for _, a := range h.attempts(t, tk.GetId()) {
			if a.Outcome == task.OutcomeReleased {
				t.Errorf("task %d: attempt %d is a RELEASED row: a wait for the budget is counted on the task, not written as an attempt", tk.GetId(), a.Number)
			}
		}
		if g := h.get(t, tk.GetId()); g.GetState() == pb.TaskState_TASK_STATE_RETRYING && g.GetAttempt() != 1 {
			t.Errorf("task %d waits at attempt %d, want 1: waiting for the budget uses no attempt", tk.GetId(), g.GetAttempt())
		}
	}
	if released != 4 {
		t.Errorf("%d retries given back, want 4", released)
	}
}
