package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func circuitOf(t *testing.T, st store.Store, g string) breaker.Circuit {
	t.Helper()
	gs, err := st.(store.GroupBreakers).Groups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return gs[g].Circuit
}

// TestBreakerOpensProbesAndCloses: a group's downstream fails everything;
// its breaker opens after a few attempts and its tasks stop running (no
// attempt used), a probe goes after the cool-down and, failing, opens it
// for longer; once the downstream is back, a probe succeeds, the breaker
// closes and every task succeeds. Tasks of another group run throughout.
func TestBreakerOpensProbesAndCloses(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	cfg := testConfig(st)
	cfg.Concurrency = 2
	cfg.Breaker = breaker.Settings{MinAttempts: 4, FailureRatio: 0.5, CoolDown: 300 * time.Millisecond, Probes: 1, RampUp: -1}
	var down atomic.Bool
	down.Store(true)
	var calls, callsWhileDown counter
	api := Handler{Kind: "call", Group: "api", Policy: &retry.Policy{MaxAttempts: 50, Backoff: retry.Constant{Interval: 5 * time.Millisecond}},
		Fn: func(context.Context, *task.Task) error {
			calls.inc()
			if down.Load() {
				callsWhileDown.inc()
				return retry.Transient(errors.New("api: 503"))
			}
			return nil
		}}
	other := Handler{Kind: "other", Group: "search", Fn: func(context.Context, *task.Task) error { return nil }}
	var ids []int64
	for range 12 {
		ids = append(ids, enqueue(t, st, task.NewTask{Kind: "call", Group: "api"}).ID)
	}
	start(t, cfg, api, other)

	waitFor(t, 10*time.Second, func() bool { return circuitOf(t, st, "api").State == breaker.Open },
		func() string { return fmt.Sprintf("breaker %+v after %d calls", circuitOf(t, st, "api"), calls.get()) })
	// While it is open, other groups go on.
	o := enqueue(t, st, task.NewTask{Kind: "other", Group: "search"})
	waitState(t, st, o.ID, task.Success)
	// The first probe fails and opens it again, for twice as long.
	waitFor(t, 10*time.Second, func() bool { return circuitOf(t, st, "api").Opens >= 2 },
		func() string { return fmt.Sprintf("breaker %+v", circuitOf(t, st, "api")) })
	if c := circuitOf(t, st, "api"); c.CoolDown != 600*time.Millisecond {
		t.Errorf("cool-down after a failed probe %v, want 600ms", c.CoolDown)
	}
	down.Store(false)
	for _, id := range ids {
		waitState(t, st, id, task.Success)
	}
	if c := circuitOf(t, st, "api"); c.State != breaker.Closed {
		t.Errorf("breaker %+v after every task succeeded, want closed", c)
	}
	// Without the breaker the 12 tasks would each have failed every 5ms
	// while the downstream was down: hundreds of calls. With it: the calls
	// that opened it, those already running then, and the probes.
	if n := callsWhileDown.get(); n > 4+2*cfg.Concurrency+3 {
		t.Errorf("%d calls while the downstream was down, want at most %d", n, 4+2*cfg.Concurrency+3)
	}
	t.Logf("%d calls while down, %d in all", callsWhileDown.get(), calls.get())
}

// TestGroupSettingsAndFailFast: a group's own settings open its breaker
// after 2 failures (the worker's would wait for 20), and while it is open
// its tasks fail at once, without running, as the group fails fast.
func TestGroupSettingsAndFailFast(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	gb := st.(store.GroupBreakers)
	set := breaker.Settings{MinAttempts: 2, FailureRatio: 0.5, CoolDown: time.Hour}
	if _, err := gb.UpdateGroup(context.Background(), "api", func(g *store.Group) { g.Settings, g.FailFast = &set, true }); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(st)
	cfg.Concurrency = 1
	var calls counter
	e := start(t, cfg, Handler{Kind: "call", Group: "api", Policy: &retry.Never, Fn: func(context.Context, *task.Task) error {
		calls.inc()
		return retry.Transient(errors.New("api: 503"))
	}})
	for range 2 {
		waitState(t, st, enqueue(t, st, task.NewTask{Kind: "call", Group: "api"}).ID, task.Failed)
	}
	// Open in the store, and in the worker's view: the update that opened
	// it may still be on its way back to the worker.
	waitFor(t, 5*time.Second, func() bool {
		return circuitOf(t, st, "api").State == breaker.Open && e.gate.Groups()["api"].Circuit.State == breaker.Open
	}, func() string { return fmt.Sprintf("breaker %+v", circuitOf(t, st, "api")) })
	late := waitState(t, st, enqueue(t, st, task.NewTask{Kind: "call", Group: "api"}).ID, task.Failed)
	if !strings.Contains(late.LastError, "breaker is open") || calls.get() != 2 {
		t.Errorf("a task of the open group: %q after %d calls, want it failed at once without a call", late.LastError, calls.get())
	}
}

func groupOf(t *testing.T, st store.Store, g string) store.Group {
	t.Helper()
	gs, err := st.(store.GroupBreakers).Groups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return gs[g]
}

// TestResourcePressureHoldsTheGroupBack: a downstream that is full answers
// with resource failures; each raises its group's pressure, which holds
// every task of the group back for a growing delay (fleet-wide, in the
// store), not only the task that failed; once it has room, the tasks
// succeed and the pressure eases.
func TestResourcePressureHoldsTheGroupBack(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	cfg := testConfig(st)
	cfg.Concurrency = 2
	cfg.PressureBase, cfg.PressureMax = 300*time.Millisecond, time.Second
	var full atomic.Bool
	full.Store(true)
	var mu sync.Mutex
	var calls []time.Time
	quick := &retry.Policy{MaxAttempts: 100, Backoff: retry.Constant{Interval: 5 * time.Millisecond},
		Resource: retry.Constant{Interval: 5 * time.Millisecond}}
	var ids []int64
	for range 10 {
		ids = append(ids, enqueue(t, st, task.NewTask{Kind: "submit", Group: "cluster"}).ID)
	}
	start(t, cfg, Handler{Kind: "submit", Group: "cluster", Policy: quick, Fn: func(context.Context, *task.Task) error {
		mu.Lock()
		calls = append(calls, time.Now())
		mu.Unlock()
		if full.Load() {
			return retry.Resource(errors.New("cluster full: scheduling timeout"))
		}
		return nil
	}})
	waitFor(t, 10*time.Second, func() bool { return groupOf(t, st, "cluster").Pressure.Level >= 1 },
		func() string { return fmt.Sprintf("pressure %+v", groupOf(t, st, "cluster").Pressure) })
	hold := groupOf(t, st, "cluster").Pressure.Until
	waitFor(t, 10*time.Second, func() bool { return time.Now().After(hold.Add(50 * time.Millisecond)) }, func() string { return "the hold to pass" })
	full.Store(false)
	mu.Lock()
	first, during := calls[0], 0
	for _, at := range calls {
		if at.After(first.Add(50*time.Millisecond)) && at.Before(hold) {
			during++
		}
	}
	mu.Unlock()
	// Each task's own resource backoff is 5ms here: without the group's
	// pressure its 10 tasks would have failed every few milliseconds
	// throughout the hold.
	if during > cfg.Concurrency {
		t.Errorf("%d calls during the %v hold after the first resource failure, want at most the %d already running",
			during, hold.Sub(first).Round(time.Millisecond), cfg.Concurrency)
	}
	for _, id := range ids {
		waitState(t, st, id, task.Success)
	}
	if p := groupOf(t, st, "cluster").Pressure; p.Level > 0 {
		t.Errorf("pressure %+v after 10 successes, want eased to 0", p)
	}
}

// TestRetryBudgetDefersRetries: 30 tasks of a group each fail once; the
// group's retry budget (kept in the store) lets only a share of them retry
// at once, the others wait, using no attempt, and every task succeeds on
// its second attempt.
func TestRetryBudgetDefersRetries(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	cfg := testConfig(st)
	cfg.Concurrency = 8
	cfg.RetryBudget = store.BudgetRates{Ratio: 0.1, Floor: 20, Burst: 2}
	cfg.Breaker = breaker.Settings{MinAttempts: 1000} // the budget alone is tested: no breaker,
	cfg.Protection.OutageTasks = -1                   // and no outage hold
	cfg.BudgetWait = 50 * time.Millisecond
	var ids []int64
	for range 30 {
		ids = append(ids, enqueue(t, st, task.NewTask{Kind: "call", Group: "api"}).ID)
	}
	e := start(t, cfg, Handler{Kind: "call", Group: "api", Policy: &retry.Policy{MaxAttempts: 3, Backoff: retry.Constant{Interval: time.Millisecond}},
		Fn: func(_ context.Context, tk *task.Task) error {
			if tk.Attempt == 1 {
				return retry.Transient(errors.New("api: 503"))
			}
			return nil
		}})
	for _, id := range ids {
		if got := waitState(t, st, id, task.Success); got.Attempt != 2 {
			t.Errorf("task %d succeeded on attempt %d, want 2: waiting for the budget uses no attempt", id, got.Attempt)
		}
	}
	if n := e.Stats().BudgetDeferred.Load(); n == 0 {
		t.Error("no retry waited for the budget: 30 retries against a burst of 2, 3 tokens from first attempts and 20 a second")
	}
	waits := 0
	for _, id := range ids {
		waits += waitState(t, st, id, task.Success).Waits
		for _, a := range attempts(t, st, id) {
			if a.Outcome == task.OutcomeReleased {
				t.Errorf("task %d: attempt %d is a RELEASED row: a wait for the budget is counted on the task (Waits), not written as an attempt", id, a.Number)
			}
		}
	}
	if waits == 0 {
		t.Error("no task counts a wait for the budget")
	}
	t.Logf("%d retries waited for the budget", e.Stats().BudgetDeferred.Load())
}

// TestGroupLimitHoldsAcrossWorkers: two workers of 4 slots each share a
// store; the group's limit of 3 running attempts holds across both, while
// its attempts hold their slots and both workers try to claim more, and
// every task still succeeds.
func TestGroupLimitHoldsAcrossWorkers(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	if _, err := st.(store.GroupBreakers).UpdateGroup(context.Background(), "api", func(g *store.Group) { g.Limit = 3 }); err != nil {
		t.Fatal(err)
	}
	p := newPeaks()
	h := Handler{Kind: "call", Group: "api", Fn: func(ctx context.Context, _ *task.Task) error {
		p.enter("api")
		defer p.leave("api")
		return p.hold(ctx, "api", 3)
	}}
	var es []*Engine
	for range 2 {
		cfg := testConfig(st)
		cfg.Concurrency = 4
		es = append(es, start(t, cfg, h))
	}
	p.watch(es...)
	var ids []int64
	for range 24 {
		ids = append(ids, enqueue(t, st, task.NewTask{Kind: "call", Group: "api"}).ID)
	}
	for _, id := range ids {
		if got := waitState(t, st, id, task.Success); got.Attempt != 1 {
			t.Errorf("task %d succeeded on attempt %d: waiting at the limit must use no attempt", id, got.Attempt)
		}
	}
	if m := p.max("api"); m != 3 {
		t.Errorf("at most %d attempts of the group ran at once, want 3 (the limit)", m)
	}
}
