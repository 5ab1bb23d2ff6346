package gate_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/decide"
	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/rate"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func (f *fixture) rate(scope store.Scope, name string, l rate.Limit) {
	f.t.Helper()
	if err := f.st.SetRate(context.Background(), store.Rate{RateKey: store.RateKey{Scope: scope, Name: name}, Limit: l}); err != nil {
		f.t.Fatal(err)
	}
	if err := f.g.Refresh(context.Background()); err != nil {
		f.t.Fatal(err)
	}
}

func tenantOf(ts []task.Task, tenant string) int {
	n := 0
	for _, t := range ts {
		if t.Tenant == tenant {
			n++
		}
	}
	return n
}

// A tenant's rate lets as many of its tasks go as its bucket holds
// tokens; the others are given back, using no attempt, to come again one
// after another at the rate. Other tenants are not slowed.
func TestTenantRateGivesBackAStream(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, c claimer) {
		f := setup(t, c, gate.Protection{})
		f.enqueue(10, task.NewTask{Tenant: "acme"})
		f.enqueue(3, task.NewTask{Tenant: "globex"})
		f.rate(store.ScopeTenant, "acme", rate.Limit{Rate: 2, Burst: 3})
		got := f.claim(20)
		if n := tenantOf(got.Tasks, "acme"); n != 3 || tenantOf(got.Tasks, "globex") != 3 || len(got.Back) != 7 {
			t.Fatalf("claimed %d of acme, %d of globex, gave back %d; want 3 (the burst), 3 and 7", n, tenantOf(got.Tasks, "globex"), len(got.Back))
		}
		for i, b := range got.Back {
			want := f.clock.Now().Add(time.Duration(i+1) * 500 * time.Millisecond)
			if !b.Finish.NextAt.Equal(want) || b.Finish.Attempt.Outcome != task.OutcomeReleased || !b.Finish.Refund {
				t.Fatalf("given back %d: next at %v (%s, refund %v), want %v, released and refunded", i, b.Finish.NextAt, b.Finish.Attempt.Outcome, b.Finish.Refund, want)
			}
			if !strings.Contains(b.Finish.Attempt.Error, "tenant acme is at its rate of 2/s burst 3") {
				t.Errorf("given back %d says %q, want the rate named", i, b.Finish.Attempt.Error)
			}
		}
		f.clock.Advance(time.Second + time.Millisecond) // two tokens, and the two told to come by then
		next := f.claim(20)
		if n := tenantOf(next.Tasks, "acme"); n != 2 || len(next.Back) != 0 {
			t.Fatalf("a second later: %d of acme went, %d given back; want 2 and none", n, len(next.Back))
		}
	})
}

// A claim takes the tokens of every rate its tasks touch in one store
// call; a task refused by one rate gives back the token another gave it.
func TestRatesOfSeveralScopes(t *testing.T) {
	t.Parallel()
	f := setup(t, claimers[0], gate.Protection{})
	f.enqueue(4, task.NewTask{Tenant: "acme", Queue: "mail"})
	f.rate(store.ScopeQueue, "mail", rate.Limit{Rate: 0.001, Burst: 3})
	f.rate(store.ScopeKind, "call", rate.Limit{Rate: 0.001, Burst: 2})
	f.rate(store.ScopeTenant, "acme", rate.Limit{Rate: 0.001, Burst: 10})
	got := f.claim(10)
	if len(got.Tasks) != 2 || len(got.Back) != 2 {
		t.Fatalf("%d went, %d given back; want 2 (the kind's burst) and 2", len(got.Tasks), len(got.Back))
	}
	rs, err := f.st.Rates(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	left := map[store.Scope]float64{}
	for _, r := range rs {
		left[r.Scope] = r.Bucket.Tokens
	}
	// The queue let 3 through; the kind took 2 of them: one comes back.
	// The tenant was asked by the 2 the kind let through alone.
	if left[store.ScopeQueue] < 1 || left[store.ScopeQueue] > 1.01 || left[store.ScopeKind] > 0.01 || left[store.ScopeTenant] < 8 || left[store.ScopeTenant] > 8.01 {
		t.Errorf("tokens left: %v; want queue 1, kind 0, tenant 8", left)
	}
}

// counted counts the calls a rate held back, by scope.
type counted struct {
	gate.NoMetrics
	held map[string]int
}

func (c *counted) RateHeld(scope string, n int) { c.held[scope] += n }

func TestRateHeldIsCounted(t *testing.T) {
	t.Parallel()
	f := setup(t, claimers[0], gate.Protection{})
	m := &counted{held: map[string]int{}}
	g, err := gate.New(gate.Config{Store: f.st, Clock: f.clock, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	f.g = g
	f.enqueue(5, task.NewTask{Group: "api"})
	f.rate(store.ScopeGroup, "api", rate.Limit{Rate: 1, Burst: 1})
	if got := f.claim(10); len(got.Tasks) != 1 || m.held["group"] != 4 {
		t.Errorf("%d went, held back counted %v; want 1, and group: 4", len(got.Tasks), m.held)
	}
}

// A downstream's Retry-After holds its group, for the fleet, as long as
// it asked, once: a burst of the same answer does not push the hold on,
// and a longer one than the hold extends it.
func TestRetryAfterHoldsTheGroupOnce(t *testing.T) {
	t.Parallel()
	f := setup(t, claimers[0], gate.Protection{})
	f.enqueue(8, task.NewTask{Group: "api"})
	got := f.claim(4).Tasks
	if len(got) != 4 {
		t.Fatalf("claimed %d, want 4", len(got))
	}
	after := func(ts []task.Task, d time.Duration) {
		fs := make([]store.Finish, len(ts))
		ends := make([]gate.End, len(ts))
		for i, x := range ts {
			fs[i] = gate.BaseFinish(x)
			fs[i].Attempt.Outcome = task.OutcomeRunning
		}
		for i, x := range ts {
			fin := &fs[i]
			decide.Failure(fin, x, retry.After(context.DeadlineExceeded, d), retry.CommonFourTimes, f.clock.Now())
			f.g.Ending(context.Background(), &ts[i], fin)
		}
		errs, err := f.st.Finish(context.Background(), fs)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ts {
			ends[i] = gate.End{Task: &ts[i], Finish: &fs[i], Err: errs[i]}
		}
		f.g.Ended(context.Background(), "w", ends)
	}
	after(got[:3], 2*time.Second)
	until := f.g.Groups()["api"].Pressure.Until
	if want := t0.Add(2 * time.Second); !until.Equal(want) {
		t.Fatalf("three 429s asking 2s: group held until %v, want %v (once, not three times)", until, want)
	}
	if more := f.claim(4).Tasks; len(more) != 0 {
		t.Fatalf("during the hold: claimed %d of the group, want none", len(more))
	}
	f.clock.Advance(time.Second)
	after(got[3:], 10*time.Second)
	if until := f.g.Groups()["api"].Pressure.Until; !until.Equal(t0.Add(11 * time.Second)) {
		t.Fatalf("a 429 asking 10s a second later: held until %v, want %v", until, t0.Add(11*time.Second))
	}
	f.clock.Advance(10 * time.Second)
	if more := f.claim(4).Tasks; len(more) == 0 {
		t.Fatal("after the hold: claimed none of the group, want its tasks again")
	}
}
