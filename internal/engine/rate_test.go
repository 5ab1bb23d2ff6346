package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/rate"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/store/sqlite/sqlitetest"
	"github.com/grit-run/grit/task"
)

// twoHandles opens two handles on one new store, as two workers of a
// fleet have.
var twoHandles = []struct {
	name string
	open func(t *testing.T) (store.Store, store.Store)
}{
	{"sqlite", func(t *testing.T) (store.Store, store.Store) {
		dsn := sqlitetest.DSN(t)
		var out [2]store.Store
		for i := range out {
			st, err := sqlite.Open(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			out[i] = st
		}
		return out[0], out[1]
	}},
	{"postgres", func(t *testing.T) (store.Store, store.Store) {
		schema := pgtest.NewSchema(t)
		return pgtest.OpenIn(t, schema), pgtest.OpenIn(t, schema)
	}},
}

// TestTenantRateAcrossTwoWorkers: a tenant rate of 5/s lets about 30
// calls through in 6 s across two workers; other tenants are not slowed.
// Real time: two engines on two handles of one store share the tenant's
// bucket, kept in the store, with its default burst (a second's worth, 5:
// 6 s hold 35 starts at most, the burst and one every 200 ms).
func TestTenantRateAcrossTwoWorkers(t *testing.T) {
	t.Parallel()
	for _, th := range twoHandles {
		t.Run(th.name, func(t *testing.T) {
			t.Parallel()
			a, b := th.open(t)
			if err := a.SetRate(context.Background(), store.Rate{RateKey: store.RateKey{Scope: store.ScopeTenant, Name: "acme"}, Limit: rate.Limit{Rate: 5}}); err != nil {
				t.Fatal(err)
			}
			var acme []task.NewTask
			for range 80 {
				acme = append(acme, task.NewTask{Kind: "call", Tenant: "acme"})
			}
			var globex []task.NewTask
			for range 20 {
				globex = append(globex, task.NewTask{Kind: "call", Tenant: "globex"})
			}
			var mu sync.Mutex
			starts := map[string][]time.Time{}
			var claimed []time.Time // acme's claims, on the store's clock: a lease's end less the lease
			h := Handler{Kind: "call", Fn: func(_ context.Context, tk *task.Task) error {
				mu.Lock()
				defer mu.Unlock()
				starts[tk.Tenant] = append(starts[tk.Tenant], time.Now())
				if tk.Tenant == "acme" {
					claimed = append(claimed, tk.LeaseExpires)
				}
				return nil
			}}
			startsOf := func(tenant string) []time.Time {
				mu.Lock()
				defer mu.Unlock()
				return append([]time.Time(nil), starts[tenant]...)
			}
			if _, err := a.Enqueue(context.Background(), append(acme, globex...)); err != nil {
				t.Fatal(err)
			}
			began := time.Now()
			for i, st := range []store.Store{a, b} {
				cfg := testConfig(st)
				cfg.WorkerID = fmt.Sprintf("w%d", i+1)
				start(t, cfg, h)
			}
			waitFor(t, 20*time.Second, func() bool { return len(startsOf("globex")) == 20 },
				func() string { return fmt.Sprintf("%d of globex's 20 tasks started", len(startsOf("globex"))) })
			took := time.Since(began)
			if took > 5*time.Second {
				t.Errorf("globex's 20 tasks took %v to start, want them prompt: acme's rate slowed another tenant", took)
			}
			// Until an acme call starts more than 6 s after its first.
			waitFor(t, 30*time.Second, func() bool {
				s := startsOf("acme")
				return len(s) > 0 && s[len(s)-1].Sub(s[0]) > 6*time.Second
			}, func() string {
				return fmt.Sprintf("%d acme calls started, none 6 s after the first", len(startsOf("acme")))
			})
			s := startsOf("acme")
			perSecond := make([]int, 6)
			in6 := 0
			for _, at := range s {
				if d := at.Sub(s[0]); d <= 6*time.Second {
					in6++
					perSecond[min(int(d/time.Second), 5)]++
				}
			}
			t.Logf("%s: acme %d calls in 6 s, by second %v; globex's 20 all started within %v", th.name, in6, perSecond, took.Round(time.Millisecond))
			if in6 < 25 || in6 > 36 {
				t.Errorf("acme: %d calls started in 6 s across two workers (by second %v), want about 30 (25 to 36) at 5/s", in6, perSecond)
			}
			// However they came, no span held more claims than the rate
			// allows in it and the burst, and one: the bucket admits tasks
			// just after they are claimed, by the store's clock, so a task
			// claimed a moment before another but admitted after it may
			// seem one too many (a busy machine starts them later still,
			// and bunched, which is why the handlers' starts are not used).
			mu.Lock()
			s = slices.SortedFunc(slices.Values(claimed), time.Time.Compare)
			mu.Unlock()
			for i := range s {
				for j := i; j < len(s); j++ {
					span := s[j].Sub(s[i]).Seconds()
					if n := float64(j - i + 1); n > 5*span+5+1 {
						t.Fatalf("acme: %v claims in %.3f s: more than 5 a second and a burst of 5", n, span)
					}
				}
			}
		})
	}
}
