// Package metrics is grit's Prometheus instrumentation: what workers and
// the API server count as they work (Metrics), what the store holds, read
// when Prometheus scrapes (NewStoreCollector), and the /metrics handler
// (Handler). docs/observability.md lists every metric.
//
// Labels are bounded by design: queue, kind, group, outcome, class, state
// and scope, never a task id, a worker or an attempt number, so that a store
// with millions of tasks has as many series as it has kinds and queues.
package metrics

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/grit-run/grit/internal/version"
	"github.com/grit-run/grit/task"
)

// Metrics counts what claimers do: the engine for Go workers and the API
// server for remote workers report through the same one, so each metric
// means the same for both. A nil *Metrics counts nothing, at no cost: its
// methods are safe to call.
type Metrics struct {
	reg         prometheus.Registerer
	enqueued    *prometheus.CounterVec
	attempts    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	startDelay  *prometheus.HistogramVec
	deadLetters *prometheus.CounterVec
	rescued     *prometheus.CounterVec
	stale       *prometheus.CounterVec
	claimErrors prometheus.Counter
	busy        prometheus.Counter
	rateHeld    *prometheus.CounterVec
	stuck       *prometheus.CounterVec
	alertsDrop  prometheus.Counter
	slotsUsed   prometheus.Gauge
	slotsFree   prometheus.Gauge

	// The children of the attempt metrics, by their labels: resolved once,
	// so that counting an attempt takes a read lock and no allocation.
	mu       sync.RWMutex
	children map[attemptKey]*attemptChildren
	waits    map[queueKind]prometheus.Observer
}

type queueKind struct{ queue, kind string }

type attemptKey struct{ queue, kind, outcome, class string }

type attemptChildren struct {
	attempts    prometheus.Counter
	duration    prometheus.Observer
	deadLetters prometheus.Counter // set when the outcome can dead-letter
}

// durationBuckets span a quick handler to an hour-long process task.
var durationBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}

// New registers grit's metrics with reg and returns them. Metrics already
// registered there by an earlier New are shared, not an error: an engine
// and an API server in one process, or two engines, count into the same
// series.
func New(reg prometheus.Registerer) (*Metrics, error) {
	r := registrar{reg: reg}
	m := &Metrics{reg: reg, children: map[attemptKey]*attemptChildren{}, waits: map[queueKind]prometheus.Observer{}}
	build := version.Get()
	register(&r, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "grit_build_info", Help: "1, with the grit version, commit and Go release this process was built from.",
		ConstLabels: prometheus.Labels{"version": build.Version, "revision": build.Revision, "goversion": build.Go},
	}, func() float64 { return 1 }))
	m.enqueued = register(&r, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "grit_tasks_enqueued_total", Help: "Tasks enqueued by this process (an idempotency key that answered an existing task is not counted).",
	}, []string{"queue", "kind"}))
	m.attempts = register(&r, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "grit_attempts_total", Help: "Attempts ended, by outcome (SUCCESS, ERROR, TIMEOUT, SNOOZED, INTERRUPTED) and error class (none for a success).",
	}, []string{"queue", "kind", "outcome", "class"}))
	m.duration = register(&r, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "grit_attempt_duration_seconds", Help: "How long attempts ran, from their start to their end, by outcome.", Buckets: durationBuckets,
	}, []string{"queue", "kind", "outcome"}))
	m.startDelay = register(&r, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "grit_attempt_start_latency_seconds", Help: "How long due tasks waited for a worker: from when each attempt became due (enqueued, or its retry's time came) to its claim.", Buckets: durationBuckets,
	}, []string{"queue", "kind"}))
	m.deadLetters = register(&r, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "grit_dead_letters_total", Help: "Tasks moved to DEAD_LETTER: the same failure twice in a row (poison).",
	}, []string{"queue", "kind"}))
	m.rescued = register(&r, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "grit_lease_rescues_total", Help: "Tasks taken over from a worker whose lease expired (or which died), by this process.",
	}, []string{"queue", "kind"}))
	m.stale = register(&r, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "grit_stale_results_total", Help: "Results rejected because the worker reporting them had lost the task's lease.",
	}, []string{"queue", "kind"}))
	m.claimErrors = register(&r, prometheus.NewCounter(prometheus.CounterOpts{
		Name: "grit_claim_errors_total", Help: "Claims that failed with a store error.",
	}))
	m.busy = register(&r, prometheus.NewCounter(prometheus.CounterOpts{
		Name: "grit_api_busy_total", Help: "API calls grit server refused unread because it had its limit of requests in flight (--max-in-flight).",
	}))
	m.rateHeld = register(&r, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "grit_rate_held_total", Help: "Claimed tasks given back to wait for a rate (calls a second) of their queue, kind, group or tenant, by the rate's scope.",
	}, []string{"scope"}))
	m.stuck = register(&r, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "grit_stuck_attempts_total", Help: "Attempts whose Go handler ignored the end of its context for the grace period: its slot was freed, its goroutine left running.",
	}, []string{"queue", "kind"}))
	m.alertsDrop = register(&r, prometheus.NewCounter(prometheus.CounterOpts{
		Name: "grit_alerts_dropped_total", Help: "Alerts a receiver (the callback, the webhook) dropped: its queue full of alerts unlike each other (alike ones are batched), or undelivered when the process stopped.",
	}))
	m.slotsUsed = register(&r, prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "grit_worker_slots_used", Help: "Attempts running now in this process's Go workers.",
	}))
	m.slotsFree = register(&r, prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "grit_worker_slots_free", Help: "Slots free now in this process's Go workers (their concurrency, less what runs).",
	}))
	if r.err != nil {
		return nil, r.err
	}
	return m, nil
}

// registrar registers collectors, keeping the first error.
type registrar struct {
	reg prometheus.Registerer
	err error
}

// register registers c, or returns the collector of the same description
// that reg holds already.
func register[C prometheus.Collector](r *registrar, c C) C {
	err := r.reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	switch {
	case err == nil:
	case errors.As(err, &are):
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
		r.err = cmpErr(r.err, err)
	default:
		r.err = cmpErr(r.err, err)
	}
	return c
}

func cmpErr(first, next error) error {
	if first != nil {
		return first
	}
	return next
}

// Enqueued counts tasks enqueued: those the store created, not those an
// idempotency key answered.
func (m *Metrics) Enqueued(ts []task.Enqueued) {
	if m == nil {
		return
	}
	for _, t := range ts {
		if !t.Existed {
			m.enqueued.WithLabelValues(t.Queue, t.Kind).Inc()
		}
	}
}

// Started observes how long claimed tasks waited for a worker: from when
// each became due (the claim returns it as NextAt) to now, the claim's
// time on the store's clock. A store that does not return the due time
// leaves it zero: then only first attempts are observed, from their
// enqueue.
func (m *Metrics) Started(ts []task.Task, now time.Time) {
	if m == nil {
		return
	}
	for i := range ts {
		t := &ts[i]
		due := t.NextAt
		if due.IsZero() {
			if t.Attempt != 1 || t.Deferrals > 0 {
				continue // a retry or a deferral waited for its backoff, not for a worker
			}
			due = t.CreatedAt
		}
		if due.IsZero() {
			continue // a store that keeps neither
		}
		m.wait(t.Queue, t.Kind).Observe(max(now.Sub(due), 0).Seconds())
	}
}

// Ended counts an attempt the store recorded: by outcome and class, its
// duration when known, and a dead letter. Attempts given back unrun
// (RELEASED) used nothing and are not counted.
func (m *Metrics) Ended(t *task.Task, a *task.Attempt, state task.State) {
	if m == nil || a.Outcome == task.OutcomeReleased {
		return
	}
	c := m.attemptChildren(attemptKey{t.Queue, t.Kind, string(a.Outcome), classOf(a)})
	c.attempts.Inc()
	if !a.StartedAt.IsZero() && !a.EndedAt.IsZero() {
		c.duration.Observe(max(a.EndedAt.Sub(a.StartedAt), 0).Seconds())
	}
	if state == task.DeadLetter {
		c.deadLetters.Inc()
	}
}

func classOf(a *task.Attempt) string {
	if a.Class == "" {
		return "none"
	}
	return a.Class
}

func (m *Metrics) wait(queue, kind string) prometheus.Observer {
	k := queueKind{queue, kind}
	m.mu.RLock()
	o, ok := m.waits[k]
	m.mu.RUnlock()
	if !ok {
		o = m.startDelay.WithLabelValues(queue, kind)
		m.mu.Lock()
		m.waits[k] = o
		m.mu.Unlock()
	}
	return o
}

func (m *Metrics) attemptChildren(k attemptKey) *attemptChildren {
	m.mu.RLock()
	c, ok := m.children[k]
	m.mu.RUnlock()
	if ok {
		return c
	}
	c = &attemptChildren{
		attempts:    m.attempts.WithLabelValues(k.queue, k.kind, k.outcome, k.class),
		duration:    m.duration.WithLabelValues(k.queue, k.kind, k.outcome),
		deadLetters: m.deadLetters.WithLabelValues(k.queue, k.kind),
	}
	m.mu.Lock()
	m.children[k] = c
	m.mu.Unlock()
	return c
}

// Rescued counts a task taken over from a worker that lost its lease; its
// attempt's end (INTERRUPTED) is counted by Ended.
func (m *Metrics) Rescued(t *task.Task) {
	if m == nil {
		return
	}
	m.rescued.WithLabelValues(t.Queue, t.Kind).Inc()
}

// Stale counts a result the store rejected: its worker had lost the lease.
func (m *Metrics) Stale(t *task.Task) {
	if m == nil {
		return
	}
	m.stale.WithLabelValues(t.Queue, t.Kind).Inc()
}

// Busy counts an API call refused, unread, at the server's limit of
// requests in flight.
func (m *Metrics) Busy() {
	if m == nil {
		return
	}
	m.busy.Inc()
}

// Stuck counts an attempt whose handler ignored the end of its context
// past its grace: hung code, not a slow downstream.
func (m *Metrics) Stuck(t *task.Task) {
	if m == nil {
		return
	}
	m.stuck.WithLabelValues(t.Queue, t.Kind).Inc()
}

// RateHeld counts n claimed tasks given back to wait for a rate of scope
// (queue, kind, group or tenant).
func (m *Metrics) RateHeld(scope string, n int) {
	if m == nil {
		return
	}
	m.rateHeld.WithLabelValues(scope).Add(float64(n))
}

// ClaimFailed counts a claim the store failed.
func (m *Metrics) ClaimFailed() {
	if m == nil {
		return
	}
	m.claimErrors.Inc()
}

// Slots adds to the slots a Go worker has: free when it starts (its
// concurrency) or stops (minus it), used when an attempt starts (+1) or
// ends (-1), which also moves a free slot.
func (m *Metrics) Slots(used, free int) {
	if m == nil {
		return
	}
	if used != 0 {
		m.slotsUsed.Add(float64(used))
	}
	if free != 0 {
		m.slotsFree.Add(float64(free))
	}
}

// AlertsDropped counts alerts a receiver dropped.
func (m *Metrics) AlertsDropped(n int) {
	if m == nil || n <= 0 {
		return
	}
	m.alertsDrop.Add(float64(n))
}
