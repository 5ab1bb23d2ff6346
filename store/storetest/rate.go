package storetest

import (
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/grit-run/grit/rate"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

var rateTests = map[string]func(*testing.T, *harness){
	"RatesAreSetListedAndRemoved": func(t *testing.T, h *harness) {
		if rs, err := h.s.Rates(h.ctx); err != nil || len(rs) != 0 {
			t.Fatalf("rates of a new store: %v (%v)", rs, err)
		}
		acme := store.RateKey{Scope: store.ScopeTenant, Name: "acme"}
		kind := store.RateKey{Scope: store.ScopeKind, Name: "mail"}
		for _, r := range []store.Rate{{RateKey: acme, Limit: rate.Limit{Rate: 5, Burst: 10}}, {RateKey: kind, Limit: rate.Limit{Rate: 0.5}},
			{RateKey: acme, Limit: rate.Limit{Rate: 7, Burst: 10}}} {
			if err := h.s.SetRate(h.ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		rs, err := h.s.Rates(h.ctx)
		if err != nil || len(rs) != 2 || rs[0].RateKey != kind || rs[1].RateKey != acme || rs[1].Limit != (rate.Limit{Rate: 7, Burst: 10}) || rs[0].Limit.Rate != 0.5 {
			t.Fatalf("rates: %+v (%v), want kind mail at 0.5/s, then tenant acme at 7/s burst 10", rs, err)
		}
		if !rs[1].Bucket.Last.IsZero() {
			t.Errorf("bucket of a rate never taken: %+v, want full (zero)", rs[1].Bucket)
		}
		if err := h.s.SetRate(h.ctx, store.Rate{RateKey: kind}); err != nil {
			t.Fatal(err)
		}
		if rs, err := h.s.Rates(h.ctx); err != nil || len(rs) != 1 || rs[0].RateKey != acme {
			t.Errorf("rates after removing the kind's: %+v (%v), want the tenant's alone", rs, err)
		}
	},
	"TakeRatesWritesBackTheBucketsOfTheRatesThereAre": func(t *testing.T, h *harness) {
		acme := store.RateKey{Scope: store.ScopeTenant, Name: "acme"}
		q := store.RateKey{Scope: store.ScopeQueue, Name: "mail"}
		if err := h.s.SetRate(h.ctx, store.Rate{RateKey: acme, Limit: rate.Limit{Rate: 2, Burst: 4}}); err != nil {
			t.Fatal(err)
		}
		now := h.now()
		var seen []store.RateKey
		err := h.s.TakeRates(h.ctx, []store.RateKey{q, acme}, func(rs map[store.RateKey]*store.Rate) {
			seen = seen[:0]
			for k, r := range rs {
				seen = append(seen, k)
				r.Bucket.Take(3, r.Limit.Rate, r.Limit.BurstOr(), now)
			}
		})
		if err != nil || len(seen) != 1 || seen[0] != acme {
			t.Fatalf("take rates of queue mail and tenant acme: fn saw %v (%v), want tenant acme alone (the queue has no rate)", seen, err)
		}
		rs, err := h.s.Rates(h.ctx)
		if err != nil || len(rs) != 1 || math.Abs(rs[0].Bucket.Tokens-1) > 1e-9 || !rs[0].Bucket.Last.Equal(now) {
			t.Fatalf("bucket after taking 3 of 4: %+v (%v), want 1 token left, counted at %v", rs, err, now)
		}
		if err := h.s.SetRate(h.ctx, store.Rate{RateKey: acme, Limit: rate.Limit{Rate: 3, Burst: 4}}); err != nil {
			t.Fatal(err)
		}
		if rs, err := h.s.Rates(h.ctx); err != nil || len(rs) != 1 || rs[0].Limit.Rate != 3 || !rs[0].Bucket.Last.Equal(now) {
			t.Errorf("after setting the rate again: %+v (%v), want 3/s and the bucket kept", rs, err)
		}
		called := false
		if err := h.s.TakeRates(h.ctx, []store.RateKey{q}, func(map[store.RateKey]*store.Rate) { called = true }); err != nil || called {
			t.Errorf("take rates of a queue without one: called %v (%v), want fn not called", called, err)
		}
	},
	"TwoClaimersShareOneRate": func(t *testing.T, h *harness) {
		// Two claimers (on two handles, when the driver has them) take one
		// token at a time, together, from a rate with a burst of 10 and
		// hardly any refill: 10 go between them, not 10 each.
		acme := store.RateKey{Scope: store.ScopeTenant, Name: "acme"}
		if err := h.s.SetRate(h.ctx, store.Rate{RateKey: acme, Limit: rate.Limit{Rate: 1.0 / 3600, Burst: 10}}); err != nil {
			t.Fatal(err)
		}
		other := h.s
		if h.reopen != nil {
			other = h.other()
		}
		now := h.now()
		var mu sync.Mutex
		went := 0
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		for _, s := range []store.Store{h.s, other} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 15 {
					var a rate.Admission
					err := s.TakeRates(h.ctx, []store.RateKey{acme}, func(rs map[store.RateKey]*store.Rate) {
						r := rs[acme]
						a = r.Bucket.Take(1, r.Limit.Rate, r.Limit.BurstOr(), now)
					})
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					went += a.Go
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if went != 10 {
			t.Errorf("two claimers took %d calls of a burst of 10, want 10", went)
		}
	},
	"BadRatesAreRefused": func(t *testing.T, h *harness) {
		for _, bad := range []store.Rate{
			{RateKey: store.RateKey{Scope: "run", Name: "r"}, Limit: rate.Limit{Rate: 1}},
			{RateKey: store.RateKey{Scope: store.ScopeTenant}, Limit: rate.Limit{Rate: 1}},
			{RateKey: store.RateKey{Scope: store.ScopeKind, Name: "k"}, Limit: rate.Limit{Rate: -1}},
			{RateKey: store.RateKey{Scope: store.ScopeKind, Name: "k"}, Limit: rate.Limit{Rate: math.NaN()}},
			{RateKey: store.RateKey{Scope: store.ScopeKind, Name: "k"}, Limit: rate.Limit{Rate: 1, Burst: math.Inf(1)}},
		} {
			if err := h.s.SetRate(h.ctx, bad); !errors.Is(err, task.ErrInvalid) {
				t.Errorf("SetRate(%+v): %v, want task.ErrInvalid", bad, err)
			}
		}
		if err := h.s.TakeRates(h.ctx, []store.RateKey{{Scope: "run", Name: "r"}}, func(map[store.RateKey]*store.Rate) {}); !errors.Is(err, task.ErrInvalid) {
			t.Errorf("TakeRates of scope run: %v, want task.ErrInvalid", err)
		}
		if rs, err := h.s.Rates(h.ctx); err != nil || len(rs) != 0 {
			t.Errorf("rates after bad sets: %v (%v), want none", rs, err)
		}
	},
}
