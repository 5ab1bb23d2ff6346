package metrics

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/keep"
	"github.com/grit-run/grit/internal/ops"
	"github.com/grit-run/grit/internal/sched"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// StoreConfig configures a StoreCollector. Zero fields mean the defaults.
type StoreConfig struct {
	Store store.Store
	// CacheFor is how long a reading of the store answers scrapes; default
	// 10s. Prometheus scrapes every 15s or more as a rule; a shorter cache
	// would only multiply the queries when several scrape one process. A
	// reading that took long is kept longer (keep.For, the dashboard's
	// rule too): twenty times what it took, at most a minute, so that on
	// a large store the counts cost at most a twentieth of the database's
	// time.
	CacheFor time.Duration
	// Timeout bounds the store's reads for one scrape; default 5s. A
	// scrape the store does not answer in time reports grit_store_up 0
	// and the last reading's age, not a hung scrape.
	Timeout time.Duration
	// Budget is the groups' retry budget, for the tokens the budget holds
	// now; default store.DefaultBudget (the workers' --retry-budget).
	Budget store.BudgetRates
	Logger *slog.Logger
}

// StoreCollector reports what the store holds when Prometheus scrapes:
// tasks by queue and state, the age of each queue's oldest due task, the
// groups' breakers, retry budgets, outage holds, probes and ramps, the
// tasks ever enqueued, the pauses, the tenants' weights and the
// schedules. It reads the store at
// most once per CacheFor, with cheap queries (store.Overview,
// store.Backlog, store.GroupBreakers); what the store cannot answer is
// left out.
type StoreCollector struct {
	cfg StoreConfig

	mu     sync.Mutex
	at     time.Time     // when last read, successfully or not
	took   time.Duration // how long that took
	last   []prometheus.Metric
	up     bool // the last reading succeeded (an empty store reads no gauges, and is up)
	readOK time.Time
}

var (
	descTasks = prometheus.NewDesc("grit_tasks", "Tasks in the store by queue and state (every worker reports the same: aggregate with max).",
		[]string{"queue", "state"}, nil)
	descOldest = prometheus.NewDesc("grit_queue_oldest_ready_age_seconds", "How long the READY or RETRYING task of the queue due the longest has waited for a worker; absent when none is due.",
		[]string{"queue"}, nil)
	descBreaker = prometheus.NewDesc("grit_group_breaker_state", "The group's circuit breaker: 1 for the state it is in, 0 for the others (closed, open, half-open).",
		[]string{"group", "state"}, nil)
	descBudget = prometheus.NewDesc("grit_group_retry_budget_tokens", "Retries the group's retry budget would let run now, fleet-wide.",
		[]string{"group"}, nil)
	descOutage = prometheus.NewDesc("grit_outage_held", "1 for each group (or kind without a group) held as an outage: many of its tasks failed alike and none succeeded.",
		[]string{"group", "kind"}, nil)
	descRamp = prometheus.NewDesc("grit_ramp_rate", "The calls a second the ramp of a group (or a kind without a group held as an outage) lets through while it ramps up after its breaker closed; absent otherwise.",
		[]string{"group", "kind"}, nil)
	descNextProbe = prometheus.NewDesc("grit_next_probe_seconds", "How long until the next probe of a group (or a kind held as an outage) whose breaker is open; 0 while probes are out; absent when it is closed.",
		[]string{"group", "kind"}, nil)
	descSchedPaused = prometheus.NewDesc("grit_schedule_paused", "1 for a schedule that is paused (by an operator, or by itself after failed slots), 0 for one that is not.",
		[]string{"schedule"}, nil)
	descSchedSlots = prometheus.NewDesc("grit_schedule_slots_total", "The schedule's slots by what became of them: enqueued (a task; triggers and backfills too), missed (older than the catch-up window), overlapped (dropped while an earlier slot's task ran).",
		[]string{"schedule", "result"}, nil)
	descSchedLate = prometheus.NewDesc("grit_schedule_late_seconds", "How long the schedule's next slot is overdue: above a few seconds, no worker ticks it (none runs, or none reaches the store); 0 when it is not due yet or paused.",
		[]string{"schedule"}, nil)
	descEnqueued = prometheus.NewDesc("grit_store_tasks_enqueued_total", "Tasks enqueued in the store by every process (grit submit, the API, workers, schedules): the largest task id handed out. Every scrape target reports the same: aggregate with max.",
		nil, nil)
	descUnserved = prometheus.NewDesc("grit_unserved_tasks", "Tasks of a kind due for a minute or more that no live worker serves (among the thousand due the longest): they wait for a worker that does not exist.",
		[]string{"kind"}, nil)
	descPaused = prometheus.NewDesc("grit_paused", "1 for each queue, kind or tenant paused (grit pause): none of its tasks starts until it is resumed.",
		[]string{"scope", "name"}, nil)
	descWeight = prometheus.NewDesc("grit_tenant_weight", "A tenant's weight in fair claims, for each tenant given one (the others have weight 1): among due tasks of one priority, a tenant of weight 3 takes three tasks to a weight-1 tenant's one.",
		[]string{"tenant"}, nil)
	descUp = prometheus.NewDesc("grit_store_up", "1 when the last reading of the store for these metrics succeeded, 0 when it failed or timed out.",
		nil, nil)
	descReadAge = prometheus.NewDesc("grit_store_reading_age_seconds", "How old the store's metrics are: the time since they were last read successfully.",
		nil, nil)
)

var breakerStates = []breaker.State{breaker.Closed, breaker.Open, breaker.HalfOpen}

// NewStoreCollector returns a collector of cfg.Store's gauges, for
// prometheus.Registerer.Register.
func NewStoreCollector(cfg StoreConfig) *StoreCollector {
	if cfg.CacheFor <= 0 {
		cfg.CacheFor = 10 * time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Budget == (store.BudgetRates{}) {
		cfg.Budget = store.DefaultBudget
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &StoreCollector{cfg: cfg}
}

// Describe implements prometheus.Collector.
func (c *StoreCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTasks, descOldest, descBreaker, descBudget, descOutage, descRamp, descNextProbe, descSchedPaused, descSchedSlots, descSchedLate, descEnqueued, descUnserved, descPaused, descWeight, descUp, descReadAge} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. Scrapes at once share one
// reading: the lock is held while the store is read.
func (c *StoreCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	up := 1.0
	if c.at.IsZero() || now.Sub(c.at) >= keep.For(c.took, c.cfg.CacheFor) {
		c.at = now
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeout)
		ms, err := c.read(ctx)
		cancel()
		c.took = time.Since(now)
		if err != nil {
			c.cfg.Logger.Warn("metrics: could not read the store; its gauges are left out until it answers", "err", err)
			c.last, c.up = nil, false
		} else {
			c.last, c.readOK, c.up = ms, now, true
		}
	}
	if !c.up {
		up = 0
	}
	for _, m := range c.last {
		ch <- m
	}
	ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, up)
	if !c.readOK.IsZero() {
		ch <- prometheus.MustNewConstMetric(descReadAge, prometheus.GaugeValue, now.Sub(c.readOK).Seconds())
	}
}

// read reads the store's gauges.
func (c *StoreCollector) read(ctx context.Context) ([]prometheus.Metric, error) {
	st := c.cfg.Store
	now, err := st.Now(ctx)
	if err != nil {
		return nil, err
	}
	var out []prometheus.Metric
	for _, read := range []func(context.Context, store.Store, time.Time) ([]prometheus.Metric, error){
		readTasks, c.readGroups, readWork, readSettings, readSchedules,
	} {
		ms, err := read(ctx, st, now)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	return out, nil
}

// readTasks reads the tasks by queue and state, and how long each
// queue's oldest due task has waited.
func readTasks(ctx context.Context, st store.Store, now time.Time) ([]prometheus.Metric, error) {
	o, ok := st.(store.Overview)
	if !ok {
		return nil, nil
	}
	counts, err := o.QueueCounts(ctx)
	if err != nil {
		return nil, err
	}
	var out []prometheus.Metric
	waiting := map[string]bool{}
	for _, qc := range counts {
		out = append(out, prometheus.MustNewConstMetric(descTasks, prometheus.GaugeValue, float64(qc.N), qc.Queue, string(qc.State)))
		if qc.State == task.Ready || qc.State == task.Retrying {
			waiting[qc.Queue] = true
		}
	}
	if b, ok := st.(store.Backlog); ok && len(waiting) > 0 {
		due, err := b.OldestDue(ctx, slices.Sorted(maps.Keys(waiting)))
		if err != nil {
			return nil, err
		}
		for q, at := range due {
			out = append(out, prometheus.MustNewConstMetric(descOldest, prometheus.GaugeValue, max(now.Sub(at), 0).Seconds(), q))
		}
	}
	return out, nil
}

// readGroups reads the groups' breakers, budgets, holds and ramps.
func (c *StoreCollector) readGroups(ctx context.Context, st store.Store, now time.Time) ([]prometheus.Metric, error) {
	groups, err := st.Groups(ctx)
	if err != nil {
		return nil, err
	}
	var out []prometheus.Metric
	for name, g := range groups {
		out = append(out, c.group(name, g, now)...)
	}
	return out, nil
}

// readWork reads the tasks ever enqueued, and the kinds of due work no
// live worker serves.
func readWork(ctx context.Context, st store.Store, now time.Time) ([]prometheus.Metric, error) {
	var out []prometheus.Metric
	us, err := ops.Unserved(ctx, st, now)
	if err != nil {
		return nil, err
	}
	for _, u := range us {
		out = append(out, prometheus.MustNewConstMetric(descUnserved, prometheus.GaugeValue, float64(u.Tasks), u.Kind))
	}
	if e, ok := st.(store.Enqueues); ok {
		n, err := e.EnqueuedTotal(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, prometheus.MustNewConstMetric(descEnqueued, prometheus.CounterValue, float64(n)))
	}
	return out, nil
}

// readSettings reads what operators set: the pauses and the tenants'
// weights.
func readSettings(ctx context.Context, st store.Store, _ time.Time) ([]prometheus.Metric, error) {
	var out []prometheus.Metric
	if p, ok := st.(store.Pauser); ok {
		ps, err := p.Pauses(ctx)
		if err != nil {
			return nil, err
		}
		for _, x := range ps {
			out = append(out, prometheus.MustNewConstMetric(descPaused, prometheus.GaugeValue, 1, string(x.Scope), x.Name))
		}
	}
	if w, ok := st.(store.Weigher); ok {
		ws, err := w.Weights(ctx)
		if err != nil {
			return nil, err
		}
		for tenant, n := range ws {
			out = append(out, prometheus.MustNewConstMetric(descWeight, prometheus.GaugeValue, float64(n), tenant))
		}
	}
	return out, nil
}

// readSchedules reads the schedules' gauges and counts.
func readSchedules(ctx context.Context, st store.Store, now time.Time) ([]prometheus.Metric, error) {
	sc, err := sched.Of(st)
	if err != nil {
		return nil, nil // the store keeps no schedules
	}
	rows, err := sc.Schedules(ctx, time.Time{})
	if err != nil {
		return nil, err
	}
	var out []prometheus.Metric
	for _, r := range rows {
		if s, err := sched.StateOf(r); err == nil {
			out = append(out, schedule(r.Name, s, now)...)
		}
	}
	return out, nil
}

// schedule is the gauges and counts of one schedule.
func schedule(name string, s sched.State, now time.Time) []prometheus.Metric {
	paused, late := 0.0, 0.0
	if s.Paused != nil {
		paused = 1
	} else if !s.Next.IsZero() && now.After(s.Next) {
		late = now.Sub(s.Next).Seconds()
	}
	return []prometheus.Metric{
		prometheus.MustNewConstMetric(descSchedPaused, prometheus.GaugeValue, paused, name),
		prometheus.MustNewConstMetric(descSchedLate, prometheus.GaugeValue, late, name),
		prometheus.MustNewConstMetric(descSchedSlots, prometheus.CounterValue, float64(s.Enqueued), name, "enqueued"),
		prometheus.MustNewConstMetric(descSchedSlots, prometheus.CounterValue, float64(s.Missed), name, "missed"),
		prometheus.MustNewConstMetric(descSchedSlots, prometheus.CounterValue, float64(s.Overlapped), name, "overlapped"),
	}
}

// group is the gauges of one group the store keeps. A kind held as an
// outage is kept as a group too (store.KindHold): it shows as the kind's
// outage, not as a group of its own.
func (c *StoreCollector) group(name string, g store.Group, now time.Time) []prometheus.Metric {
	state := g.Circuit.State
	if state == "" {
		state = breaker.Closed
	}
	var out []prometheus.Metric
	group, kind := name, ""
	if k, ok := strings.CutPrefix(name, store.KindHold); ok {
		group, kind = "", k
	}
	if h, ok := ops.HoldOf(name, g, now); ok {
		switch h.Wait {
		case ops.WaitRamp:
			out = append(out, prometheus.MustNewConstMetric(descRamp, prometheus.GaugeValue, h.Rate, group, kind))
		case ops.WaitProbe:
			out = append(out, prometheus.MustNewConstMetric(descNextProbe, prometheus.GaugeValue, max(h.Until.Sub(now).Seconds(), 0), group, kind))
		}
	}
	if kind != "" {
		if g.Outage != nil && state != breaker.Closed {
			out = append(out, prometheus.MustNewConstMetric(descOutage, prometheus.GaugeValue, 1, "", kind))
		}
		return out
	}
	for _, s := range breakerStates {
		v := 0.0
		if s == state {
			v = 1
		}
		out = append(out, prometheus.MustNewConstMetric(descBreaker, prometheus.GaugeValue, v, name, string(s)))
	}
	out = append(out, prometheus.MustNewConstMetric(descBudget, prometheus.GaugeValue, g.Budget.Available(now, c.cfg.Budget), name))
	if g.Outage != nil && state != breaker.Closed {
		out = append(out, prometheus.MustNewConstMetric(descOutage, prometheus.GaugeValue, 1, name, g.Outage.Kind))
	}
	return out
}
