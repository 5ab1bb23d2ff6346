package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// TestOutageIsHeldNotDeadLettered: 20 tasks of one kind, no group, all
// failing with one fingerprint that is not a network error (a downstream
// that answers with a bug while it is down): each would be poison at its
// second failure. They are not dead-lettered: the failure spread over
// many tasks and none succeeded, so the kind is held as an outage, probed,
// and released when the failure stops; every task then succeeds, with far
// fewer attempts than the policy's 20 × 11.
func TestOutageIsHeldNotDeadLettered(t *testing.T) {
	t.Parallel()
	for _, group := range []string{"", "api"} {
		t.Run("group="+group, func(t *testing.T) {
			t.Parallel()
			st := newStore(t)
			cfg := testConfig(st)
			cfg.Protection.Breaker = breaker.Settings{CoolDown: 200 * time.Millisecond}
			var mu sync.Mutex
			alerts := map[alert.Type]int{}
			cfg.Alerting.OnAlert = func(ev alert.Event) {
				mu.Lock()
				defer mu.Unlock()
				alerts[ev.Type]++
			}
			var down atomic.Bool
			down.Store(true)
			var calls atomic.Int64
			h := Handler{Kind: "sync", Group: group, Policy: ptr(mustParse(t, "10 50ms 200ms")), Fn: func(context.Context, *task.Task) error {
				calls.Add(1)
				if down.Load() {
					return errors.New("upstream: ledger row 1234 is locked by migration 77") // unclassified, same fingerprint
				}
				return nil
			}}
			var ids []int64
			for range 20 {
				ids = append(ids, enqueue(t, st, task.NewTask{Kind: "sync", Group: group}).ID)
			}
			start(t, cfg, h)
			hold := group
			if hold == "" {
				hold = "kind:sync"
			}
			waitFor(t, 20*time.Second, func() bool { return groupOf(t, st, hold).Outage != nil },
				func() string { return fmt.Sprintf("no outage held on %s: %+v", hold, groupOf(t, st, hold)) })
			if o := groupOf(t, st, hold).Outage; o.Kind != "sync" || o.Error == "" {
				t.Errorf("outage %+v", o)
			}
			whileDown := calls.Load()
			down.Store(false)
			for _, id := range ids {
				if got := waitState(t, st, id, task.Success, task.DeadLetter); got.State != task.Success {
					t.Fatalf("task %d: %s after %d attempts (%s), want SUCCESS: an outage is not poison", id, got.State, got.Attempt, got.LastError)
				}
			}
			if n := calls.Load(); n > 20*4 {
				t.Errorf("%d calls in all (%d while down), want far fewer than the policy's 20 × 11", n, whileDown)
			}
			waitFor(t, 10*time.Second, func() bool { return groupOf(t, st, hold).Outage == nil },
				func() string { return fmt.Sprintf("the outage was not cleared: %+v", groupOf(t, st, hold)) })
			waitFor(t, 10*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return alerts[alert.OutageHeld] > 0 },
				func() string { return "no outage alert" })
			mu.Lock()
			if alerts[alert.OutageHeld] != 1 || alerts[alert.DeadLetter] != 0 {
				t.Errorf("alerts %v, want one outage held and no dead letter", alerts)
			}
			mu.Unlock()
			t.Logf("%d calls while down, %d in all", whileDown, calls.Load())
		})
	}
}

// TestPoisonAmongHealthyTasksIsDeadLettered: one task fails the same way
// twice while 20 others of its kind succeed: it is poison, DEAD_LETTER at
// its second attempt, as always.
func TestPoisonAmongHealthyTasksIsDeadLettered(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	cfg := testConfig(st)
	var healthy []int64
	for i := range 20 {
		healthy = append(healthy, enqueue(t, st, task.NewTask{Kind: "sync", Args: []byte(fmt.Sprintf(`{"n": %d}`, i))}).ID)
	}
	start(t, cfg, Handler{Kind: "sync", Policy: ptr(mustParse(t, "10 50ms 200ms")), Fn: func(_ context.Context, tk *task.Task) error {
		if string(tk.Args) == `{"poison": true}` {
			return errors.New("cannot parse row 17: unexpected field")
		}
		return nil
	}})
	for _, id := range healthy {
		waitState(t, st, id, task.Success)
	}
	bad := enqueue(t, st, task.NewTask{Kind: "sync", Args: []byte(`{"poison": true}`)})
	if got := waitState(t, st, bad.ID, task.DeadLetter, task.Success, task.Failed); got.State != task.DeadLetter || got.Attempt != 2 {
		t.Errorf("the poisoned task: %s at attempt %d, want DEAD_LETTER at attempt 2", got.State, got.Attempt)
	}
}

func ptr[T any](v T) *T { return &v }

func mustParse(t *testing.T, s string) retry.Policy {
	t.Helper()
	p, err := retry.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAShortOutageEndsSoon: 20 tasks of a kind without a group call a
// downstream that is down for 6 s from their first call. With grit's
// defaults (concurrency, poll, retry policy, breaker), the kind is held
// as an outage after the first failures, probed a second later and then
// at doubling intervals, and released in a ramp when a probe succeeds:
// every task is done within 6 s of the downstream's return, none
// dead-lettered, on both stores.
func TestAShortOutageEndsSoon(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(testing.TB) store.Store{
		"sqlite":   newStore,
		"postgres": func(t testing.TB) store.Store { return pgtest.Open(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const outage, within = 6 * time.Second, 6 * time.Second
			st := open(t)
			cfg := testConfig(st)
			cfg.Concurrency, cfg.Poll, cfg.Lease, cfg.Heartbeat = 0, 0, 0, 0 // the defaults
			var mu sync.Mutex
			var upAt time.Time
			done := map[int64]time.Time{}
			calls := 0
			h := Handler{Kind: "sync", Fn: func(_ context.Context, tk *task.Task) error {
				mu.Lock()
				defer mu.Unlock()
				now := time.Now()
				calls++
				if upAt.IsZero() {
					upAt = now.Add(outage)
				}
				if now.Before(upAt) {
					return errors.New("upstream: ledger row 1234 is locked by migration 77") // unclassified, one fingerprint
				}
				done[tk.ID] = now
				return nil
			}}
			var ids []int64
			for range 20 {
				ids = append(ids, enqueue(t, st, task.NewTask{Kind: "sync"}).ID)
			}
			start(t, cfg, h)
			held := false
			for _, id := range ids {
				// A task whose second failure came before the failure had
				// spread far enough to be told from poison is dead-lettered,
				// and replayed when the outage is declared: it ends SUCCESS
				// too.
				waitState(t, st, id, task.Success)
				for _, a := range attempts(t, st, id) {
					held = held || a.Decision == "outage"
				}
			}
			mu.Lock()
			defer mu.Unlock()
			var last time.Time
			for _, at := range done {
				if at.After(last) {
					last = at
				}
			}
			t.Logf("%s: the last task done %v after the downstream's return; %d calls", name, last.Sub(upAt).Round(time.Millisecond), calls)
			if !held {
				t.Error("no attempt was decided \"outage\": the kind was not held")
			}
			if d := last.Sub(upAt); d > within {
				t.Errorf("the last task was done %v after the downstream returned, want within %v", d.Round(time.Millisecond), within)
			}
		})
	}
}
