package metrics_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/sched"
	"github.com/grit-run/grit/metrics"
	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres/pgtest"
	_ "github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// TestStoreCollector reads a real store's gauges: tasks by queue and
// state, the age of the oldest due task, a group's breaker and budget,
// and a kind held as an outage; then serves the same reading from its
// cache while the store changes.
func TestStoreCollector(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "grit.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		testStoreCollector(t, st)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		testStoreCollector(t, pgtest.Open(t))
	})
}

func testStoreCollector(t *testing.T, st store.Store) {
	ctx := t.Context()
	now, _ := st.Now(ctx)
	if _, err := st.Enqueue(ctx, []task.NewTask{
		{Kind: "k", RunAt: now.Add(-time.Minute)}, {Kind: "k"}, {Kind: "k", Queue: "mail", RunAt: now.Add(time.Hour)},
	}); err != nil {
		t.Fatal(err)
	}
	gb := st.(store.GroupBreakers)
	if _, err := gb.UpdateGroup(ctx, "smtp", func(g *store.Group) {
		g.Circuit = breaker.Circuit{State: breaker.Open, Since: now, CoolDown: time.Minute}
		g.Budget = store.Budget{Tokens: 3, Last: now}
		g.Outage = &store.Outage{Kind: "send", Fingerprint: "f", Since: now}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := gb.UpdateGroup(ctx, store.KindHold+"resize", func(g *store.Group) {
		g.Circuit = breaker.Circuit{State: breaker.HalfOpen, Since: now}
		g.Outage = &store.Outage{Kind: "resize", Fingerprint: "f", Since: now}
	}); err != nil {
		t.Fatal(err)
	}
	var bs breaker.Settings
	if _, err := gb.UpdateGroup(ctx, "api", func(g *store.Group) {
		bs.Trip(&g.Circuit, now.Add(-time.Minute), 0)
		bs.Close(&g.Circuit, now.Add(-time.Second))
	}); err != nil {
		t.Fatal(err)
	}
	// A schedule declared an hour ago and never ticked is late; a paused
	// one is not.
	for _, s := range []schedule.Schedule{{Name: "beat", Every: time.Minute}, {Name: "nightly", Cron: "@daily"}} {
		s.Task.Kind = "k"
		if err := sched.Declare(ctx, st, now.Add(-time.Hour), s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sched.Pause(ctx, st, "nightly", "ops", "", now); err != nil {
		t.Fatal(err)
	}
	if err := st.(store.Weigher).SetWeight(ctx, "acme", 3); err != nil {
		t.Fatal(err)
	}
	if _, err := st.(store.Pauser).Pause(ctx, store.Pause{Scope: store.ScopeQueue, Name: "mail", Who: "ops"}); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewStoreCollector(metrics.StoreConfig{Store: st, CacheFor: time.Hour, Budget: store.BudgetRates{Ratio: 0.2, Burst: 10}}))
	got := gather(t, reg)
	want := map[string]float64{
		`grit_tasks{queue="default",state="READY"}`:                    2,
		`grit_tasks{queue="mail",state="READY"}`:                       1,
		`grit_group_breaker_state{group="smtp",state="open"}`:          1,
		`grit_group_breaker_state{group="smtp",state="closed"}`:        0,
		`grit_group_retry_budget_tokens{group="smtp"}`:                 3,
		`grit_outage_held{group="smtp",kind="send"}`:                   1,
		`grit_outage_held{group="",kind="resize"}`:                     1,
		`grit_next_probe_seconds{group="",kind="resize"}`:              0,
		`grit_ramp_rate{group="api",kind=""}`:                          10,
		`grit_schedule_paused{schedule="nightly"}`:                     1,
		`grit_schedule_paused{schedule="beat"}`:                        0,
		`grit_schedule_late_seconds{schedule="nightly"}`:               0,
		`grit_schedule_slots_total{result="enqueued",schedule="beat"}`: 0,
		`grit_tenant_weight{tenant="acme"}`:                            3,
		`grit_paused{name="mail",scope="queue"}`:                       1,
		`grit_store_tasks_enqueued_total`:                              3,
		`grit_unserved_tasks{kind="k"}`:                                1,
		`grit_store_up`:                                                1,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present: %v), want %v", k, g, ok, v)
		}
	}
	if late := got[`grit_schedule_late_seconds{schedule="beat"}`]; late < 59*60 || late > 61*60 {
		t.Errorf("a schedule of every minute, not ticked for an hour, is %vs late, want about an hour", late)
	}
	if age := got[`grit_queue_oldest_ready_age_seconds{queue="default"}`]; age < 60 || age > 120 {
		t.Errorf("the default queue's oldest due task waited %vs, want a minute", age)
	}
	if _, ok := got[`grit_queue_oldest_ready_age_seconds{queue="mail"}`]; ok {
		t.Error("the mail queue has an oldest due age, but nothing in it is due")
	}
	if next := got[`grit_next_probe_seconds{group="smtp",kind=""}`]; next < 50 || next > 60 {
		t.Errorf("a breaker opened now for a minute probes in %vs, want a minute", next)
	}
	if _, ok := got[`grit_group_breaker_state{group="kind:resize",state="half-open"}`]; ok {
		t.Error("a kind held as an outage shows as a group")
	}

	if _, err := st.Enqueue(ctx, []task.NewTask{{Kind: "k"}}); err != nil {
		t.Fatal(err)
	}
	if n := gather(t, reg)[`grit_tasks{queue="default",state="READY"}`]; n != 2 {
		t.Errorf("within CacheFor the store was read again: %v READY, want the cached 2", n)
	}
}

// gather reads a registry's gauges, each named as name{label="value",…}
// in the order the collector gave the labels.
func gather(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			key := f.GetName()
			if len(m.GetLabel()) > 0 {
				key += "{"
				for i, l := range m.GetLabel() {
					if i > 0 {
						key += ","
					}
					key += l.GetName() + "=\"" + l.GetValue() + "\""
				}
				key += "}"
			}
			out[key] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	return out
}

// TestEmptyStoreIsUp: a store with no tasks, groups or schedules reads no
// gauges, and is up: grit_store_up says whether the reading failed, not
// whether it found anything.
func TestEmptyStoreIsUp(t *testing.T) {
	t.Parallel()
	st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "grit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewStoreCollector(metrics.StoreConfig{Store: st}))
	if got := gather(t, reg)[`grit_store_up`]; got != 1 {
		t.Errorf("grit_store_up = %v on an empty store, want 1", got)
	}
	st.Close() // a closed store fails its reading
	reg = prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewStoreCollector(metrics.StoreConfig{Store: st}))
	if got := gather(t, reg)[`grit_store_up`]; got != 0 {
		t.Errorf("grit_store_up = %v on a closed store, want 0", got)
	}
}
