package gate_test

import (
	"context"
	"testing"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/clock"
	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/store/sqlite/sqlitetest"
	"github.com/grit-run/grit/task"
)

// The gate is the one place where both claimers (the engine for Go
// workers, the API server for remote workers) are protected. Each case
// below runs for both kinds of claimer: a Go worker, which claims with a
// fixed concurrency, and a remote worker, which asks for what it has room
// for (Capacity 0). Time is a fake clock that the store reads too, so
// breakers, budgets and limits are tested without sleeping.

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

type claimer struct {
	name     string
	capacity int // 0: a remote worker
}

var claimers = []claimer{{"engine", 10}, {"remote", 0}}

type fixture struct {
	t     *testing.T
	clock *clock.Fake
	st    *sqlite.Store
	g     *gate.Gate
	c     claimer
}

func setup(t *testing.T, c claimer, p gate.Protection) *fixture {
	t.Helper()
	fc := clock.NewFake(t0)
	st, err := sqlite.OpenConfig(context.Background(), sqlite.Config{Path: sqlitetest.Path(t), Now: fc.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	g, err := gate.New(gate.Config{Store: st, Protection: p, Clock: fc})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, clock: fc, st: st, g: g, c: c}
}

func (f *fixture) enqueue(n int, nt task.NewTask) []int64 {
	f.t.Helper()
	var ids []int64
	for range n {
		nt.Kind = "call"
		ts, err := f.st.Enqueue(context.Background(), []task.NewTask{nt})
		if err != nil {
			f.t.Fatal(err)
		}
		ids = append(ids, ts[0].ID)
	}
	return ids
}

func (f *fixture) group(name string, fn func(*store.Group)) {
	f.t.Helper()
	if _, err := f.st.UpdateGroup(context.Background(), name, fn); err != nil {
		f.t.Fatal(err)
	}
	if err := f.g.Refresh(context.Background()); err != nil {
		f.t.Fatal(err)
	}
}

// claim claims up to limit tasks for the claimer through the gate and
// records what the gate gave back, as each claimer does.
func (f *fixture) claim(limit int) gate.Claimed {
	f.t.Helper()
	c, err := f.g.Claim(context.Background(), gate.Request{Capacity: f.c.capacity, ClaimRequest: store.ClaimRequest{
		Worker: "w", Kinds: []string{"call"}, Limit: limit, Lease: time.Minute}})
	if err != nil {
		f.t.Fatal(err)
	}
	if len(c.Back) > 0 {
		fs := make([]store.Finish, len(c.Back))
		for i, b := range c.Back {
			fs[i] = b.Finish
		}
		if _, err := f.st.Finish(context.Background(), fs); err != nil {
			f.t.Fatal(err)
		}
	}
	return c
}

// end ends attempts of the claimer, as succeeded (ok) or failed with
// class, retried at once, and tells the gate.
func (f *fixture) end(ts []task.Task, ok bool, class retry.Class) {
	f.t.Helper()
	now := f.clock.Now()
	fs := make([]store.Finish, len(ts))
	ends := make([]gate.End, len(ts))
	for i, t := range ts {
		fin := gate.BaseFinish(t)
		if ok {
			fin.State, fin.Attempt.Outcome = task.Success, task.OutcomeSuccess
		} else {
			fin.State, fin.NextAt = task.Retrying, now
			fin.Attempt.Outcome, fin.Attempt.Class = task.OutcomeError, class.String()
		}
		fs[i] = fin
	}
	errs, err := f.st.Finish(context.Background(), fs)
	if err != nil {
		f.t.Fatal(err)
	}
	for i := range ts {
		ends[i] = gate.End{Task: &ts[i], Finish: &fs[i], Err: errs[i]}
	}
	f.g.Ended(context.Background(), "w", ends)
}

func groupOf(ts []task.Task, group string) int {
	n := 0
	for _, t := range ts {
		if t.Group == group {
			n++
		}
	}
	return n
}

func each(t *testing.T, fn func(t *testing.T, c claimer)) {
	for _, c := range claimers {
		t.Run(c.name, func(t *testing.T) { fn(t, c) })
	}
}

// An open breaker holds its group back; after the cool-down the store's
// breaker lets its probes through, one task each; their successes close
// it, and dispatch ramps up: at the ramp's rate at first, what passes it
// given back to come again in turn, and all of it once the ramp is over.
func TestBreakerProbesThenRamps(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, c claimer) {
		s := breaker.Settings{Probes: 2, CoolDown: 10 * time.Second, RampRate: 2, RampGrowth: 0.001, RampUp: 20 * time.Second}
		f := setup(t, c, gate.Protection{Breaker: s})
		f.enqueue(20, task.NewTask{Group: "api"})
		f.enqueue(2, task.NewTask{})
		f.group("api", func(g *store.Group) { s.Trip(&g.Circuit, t0, 0) })

		if got := f.claim(10); len(got.Tasks) != 2 || groupOf(got.Tasks, "api") != 0 {
			t.Fatalf("open: claimed %d tasks, %d of the group; want the 2 ungrouped alone", len(got.Tasks), groupOf(got.Tasks, "api"))
		}
		f.clock.Advance(10 * time.Second)
		probes := f.claim(10).Tasks
		if len(probes) != 1 || probes[0].Group != "api" {
			t.Fatalf("after the cool-down: claimed %v, want one probe of the group", probes)
		}
		f.clock.Advance(200 * time.Millisecond) // the gate spaces its probes
		more := f.claim(10).Tasks
		if len(more) != 1 {
			t.Fatalf("second probe: claimed %d, want 1 (Probes: 2)", len(more))
		}
		f.clock.Advance(200 * time.Millisecond)
		if got := f.claim(10).Tasks; len(got) != 0 {
			t.Fatalf("with both probes out: claimed %d, want none", len(got))
		}
		f.end(append(probes, more...), true, 0)
		if g := f.g.Groups()["api"]; g.Circuit.State != breaker.Closed {
			t.Fatalf("after two probe successes: breaker %s, want closed", g.Circuit.State)
		}
		// The ramp starts at 2 calls a second, with one token: one task of
		// the group goes, and the others claimed are given back to come
		// again half a second apart.
		ramp := f.claim(10)
		if n := groupOf(ramp.Tasks, "api"); n != 1 || len(ramp.Back) != 9 {
			t.Fatalf("at the start of the ramp: claimed %d of the group and gave back %d, want 1 and 9", n, len(ramp.Back))
		}
		for i, b := range ramp.Back {
			// Half a second apart, as the rate grows by 0.001 a call.
			want := f.clock.Now().Add(time.Duration(i+1) * 500 * time.Millisecond)
			if d := b.Finish.NextAt.Sub(want); d < -10*time.Millisecond || d > 0 || b.Finish.Attempt.Outcome != task.OutcomeReleased {
				t.Fatalf("given back %d: next at %v (%s), want %v, released", i, b.Finish.NextAt, b.Finish.Attempt.Outcome, want)
			}
		}
		f.clock.Advance(time.Second) // two tokens
		next := f.claim(10)
		if n := groupOf(next.Tasks, "api"); n != 2 {
			t.Fatalf("a second later: %d of the group went, want 2", n)
		}
		f.end(append(ramp.Tasks, next.Tasks...), true, 0)
		f.clock.Advance(20 * time.Second)
		if n := groupOf(f.claim(10).Tasks, "api"); n != 10 {
			t.Fatalf("after the ramp: claimed %d of the group, want 10", n)
		}
	})
}

// A claimer that still takes a group for ramping up, when another's
// results have opened its breaker again in the store, gives what it
// claimed back until the next probe: the store's breaker decides.
func TestARampOpenedElsewhereGivesBack(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, c claimer) {
		s := breaker.Settings{CoolDown: 10 * time.Second, RampRate: 1}
		f := setup(t, c, gate.Protection{Breaker: s})
		f.enqueue(4, task.NewTask{Group: "api"})
		f.group("api", func(g *store.Group) {
			s.Trip(&g.Circuit, f.clock.Now().Add(-time.Minute), 0)
			s.Close(&g.Circuit, f.clock.Now().Add(-time.Second))
		})
		// Opened again by another claimer: this one's gate has not read it.
		if _, err := f.st.UpdateGroup(context.Background(), "api", func(g *store.Group) { s.Trip(&g.Circuit, f.clock.Now(), 0) }); err != nil {
			t.Fatal(err)
		}
		got := f.claim(10)
		if len(got.Tasks) != 0 || len(got.Back) != 4 {
			t.Fatalf("claimed %d and gave back %d, want none and 4", len(got.Tasks), len(got.Back))
		}
		for _, b := range got.Back {
			if want := f.clock.Now().Add(10 * time.Second); !b.Finish.NextAt.Equal(want) {
				t.Errorf("given back until %v, want the next probe, %v", b.Finish.NextAt, want)
			}
		}
	})
}

// A group's retry budget lets only as many retries run as it has tokens;
// the others are given back to wait, using no attempt.
func TestRetryBudgetGivesRetriesBack(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, c claimer) {
		f := setup(t, c, gate.Protection{RetryBudget: store.BudgetRates{Ratio: 0, Floor: 0, Burst: 2}, BudgetWait: time.Second})
		f.enqueue(6, task.NewTask{Group: "api"})
		first := f.claim(10)
		if len(first.Tasks) != 6 {
			t.Fatalf("first attempts: claimed %d, want 6 (they take no token)", len(first.Tasks))
		}
		f.end(first.Tasks, false, retry.ClassTransient)
		retries := f.claim(10)
		if len(retries.Tasks) != 2 || len(retries.Back) != 4 {
			t.Fatalf("retries: %d run, %d given back; want 2 and 4 (a burst of 2)", len(retries.Tasks), len(retries.Back))
		}
		for _, b := range retries.Back {
			got, err := f.st.GetTask(context.Background(), b.Task.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != task.Retrying || got.Attempt != 1 || !got.NextAt.After(f.clock.Now()) {
				t.Errorf("task given back: %s, attempt %d, due %v; want RETRYING, attempt 1 (refunded), due later", got.State, got.Attempt, got.NextAt)
			}
		}
	})
}

// A group's limit of running attempts holds: past it, the claimer gives
// back what it took and leaves the group alone; an attempt that ends frees
// a place, which its claimer's next claim takes at once.
func TestGroupLimitHoldsAndFreesPlaces(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, c claimer) {
		f := setup(t, c, gate.Protection{})
		f.enqueue(8, task.NewTask{Group: "api"})
		f.group("api", func(g *store.Group) { g.Limit = 3 })
		got := f.claim(10)
		if len(got.Tasks) != 3 || len(got.Back) != 5 {
			t.Fatalf("claimed %d to run, %d given back; want 3 and 5 (limit 3)", len(got.Tasks), len(got.Back))
		}
		f.enqueue(2, task.NewTask{Group: "api"})
		if more := f.claim(10); len(more.Tasks)+len(more.Back) != 0 {
			t.Fatalf("at the limit: claimed %d, gave back %d; want the group left alone", len(more.Tasks), len(more.Back))
		}
		f.end(got.Tasks[:1], true, 0)
		if more := f.claim(10); len(more.Tasks) != 1 || len(more.Back) != 0 {
			t.Fatalf("after one ended: %d to run, %d given back; want the 1 freed place taken", len(more.Tasks), len(more.Back))
		}
	})
}

// A queue's limit holds across claims in the same way.
func TestQueueLimitHolds(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, c claimer) {
		f := setup(t, c, gate.Protection{})
		f.enqueue(5, task.NewTask{Queue: "mail"})
		f.enqueue(2, task.NewTask{Queue: "default"})
		if err := f.st.SetLimit(context.Background(), store.Limit{Scope: store.ScopeQueue, Name: "mail", Max: 2}); err != nil {
			t.Fatal(err)
		}
		if err := f.g.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := f.claim(10)
		mail := 0
		for _, x := range got.Tasks {
			if x.Queue == "mail" {
				mail++
			}
		}
		if mail != 2 || len(got.Tasks) != 4 || len(got.Back) != 3 {
			t.Fatalf("claimed %d (%d of mail), gave back %d; want 4 with 2 of mail, 3 given back", len(got.Tasks), mail, len(got.Back))
		}
	})
}

// A group that fails fast has its tasks failed at once while its breaker
// cools down, without running them.
func TestFailFastFailsAtOnce(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, c claimer) {
		f := setup(t, c, gate.Protection{})
		f.enqueue(3, task.NewTask{Group: "api"})
		f.group("api", func(g *store.Group) {
			g.FailFast = true
			breaker.Settings{}.Trip(&g.Circuit, t0, time.Minute)
		})
		got := f.claim(10)
		if len(got.Tasks) != 0 || len(got.Back) != 3 {
			t.Fatalf("%d to run, %d failed; want none to run, 3 failed", len(got.Tasks), len(got.Back))
		}
		for _, b := range got.Back {
			if b.Finish.State != task.Failed {
				t.Errorf("task %d: %s, want FAILED", b.Task.ID, b.Finish.State)
			}
		}
	})
}

// A resource failure holds the whole group back for PressureBase, and
// the claimer's window of the group narrows; successes widen it again.
func TestResourcePressureHoldsTheGroup(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, c claimer) {
		f := setup(t, c, gate.Protection{PressureBase: time.Second, PressureMax: time.Minute})
		f.enqueue(10, task.NewTask{Group: "cluster"})
		got := f.claim(4).Tasks
		if len(got) != 4 {
			t.Fatalf("claimed %d, want 4", len(got))
		}
		f.end(got[:1], false, retry.ClassResource)
		if more := f.claim(4).Tasks; len(more) != 0 {
			t.Fatalf("during the hold: claimed %d of the group, want none", len(more))
		}
		f.clock.Advance(time.Second)
		// The window was halved from the 3 still running to 1 (at least
		// 1); 3 run still, so none more may go.
		if more := f.claim(4).Tasks; len(more) != 0 {
			t.Fatalf("after the hold, with the window full: claimed %d, want none", len(more))
		}
		f.end(got[1:], true, 0)
		if more := f.claim(4).Tasks; len(more) == 0 {
			t.Fatal("after the successes: claimed none, want the window open again")
		}
	})
}

// An expired lease is rescued by the interrupted rule: the task is due
// again at once, its attempt counted.
func TestRescueOfExpiredLeases(t *testing.T) {
	t.Parallel()
	f := setup(t, claimers[0], gate.Protection{})
	f.enqueue(1, task.NewTask{})
	got := f.claim(1).Tasks
	if len(got) != 1 {
		t.Fatalf("claimed %d, want 1", len(got))
	}
	f.clock.Advance(2 * time.Minute) // past the minute's lease
	var rescued []gate.End
	if err := f.g.Rescue(context.Background(), store.RescueRequest{Worker: "rescuer", Lease: time.Minute}, func(es []gate.End) { rescued = append(rescued, es...) }); err != nil {
		t.Fatal(err)
	}
	if len(rescued) != 1 || rescued[0].Err != nil || rescued[0].Finish.State != task.Retrying || rescued[0].Finish.Attempt.Outcome != task.OutcomeInterrupted {
		t.Fatalf("rescued %+v, want the task RETRYING after an INTERRUPTED attempt", rescued)
	}
}
