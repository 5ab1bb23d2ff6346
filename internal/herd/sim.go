package herd

import (
	"container/heap"
	"hash/fnv"
	"math/rand/v2"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/retry"
)

// epoch is the simulation's time zero, for the budget and the breaker.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// The protection a protected strategy shares between its clients. The
// budget's floor is half the downstream's capacity: retries with no new
// traffic behind them (the whole load here) may use at most that. The
// breaker, for the protected strategies as for the hold, is grit's with
// its default settings: probes after a second, doubling to 30s, and a
// ramp after closing, which Admit decides as it does for grit's workers.
func protection(c Config, now *time.Duration) (*retry.Budget, breaker.Settings) {
	b := &retry.Budget{Ratio: 0.2, Floor: c.Capacity / 2, Burst: c.Capacity,
		Now: func() time.Time { return epoch.Add(*now) }}
	return b, breaker.Settings{}
}

// sim is one strategy's run in progress.
type sim struct {
	cfg     Config
	s       Strategy
	bo      retry.Backoff
	rng     *rand.Rand
	now     time.Duration
	q       queue
	budget  *retry.Budget
	bs      breaker.Settings
	circuit breaker.Circuit
	hold    *hold   // the outage hold's state, for a strategy with it
	served  float64 // what the downstream can still serve this tick
	res     Result
	done    int
	last    time.Duration // when the last client succeeded
}

// Run simulates one strategy; for a Config (Seed included) and a strategy
// it always returns the same result.
func Run(cfg Config, s Strategy) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	cfg = cfg.withDefaults()
	bo, err := s.backoff(cfg)
	if err != nil {
		return Result{}, err
	}
	h := fnv.New64a()
	h.Write([]byte(s.String()))
	m := &sim{cfg: cfg, s: s, bo: bo, rng: rand.New(rand.NewPCG(cfg.Seed, h.Sum64()))}
	m.budget, m.bs = protection(cfg, &m.now)
	if s.Hold {
		m.hold = newHold(cfg.Clients)
	}
	m.res = Result{Strategy: s.String(), Load: make([]float64, int(cfg.Horizon/cfg.Bucket)+1)}
	m.q = make(queue, cfg.Clients)
	for i := range m.q {
		m.q[i] = &client{id: i, next: time.Duration(m.rng.Float64() * float64(cfg.Spread))}
	}
	heap.Init(&m.q)
	m.loop()
	return m.result(), nil
}

func (m *sim) loop() {
	perTick := m.cfg.Capacity * m.cfg.Tick.Seconds()
	burst := m.cfg.Capacity * m.cfg.Bucket.Seconds()
	var due []*client
	for m.now = 0; m.now < m.cfg.Horizon && m.done < m.cfg.Clients; m.now += m.cfg.Tick {
		// The downstream absorbs a burst of one bucket's worth of calls;
		// capacity unused beyond that is lost.
		m.served = min(m.served+perTick, max(perTick, burst))
		due = due[:0]
		for m.q.Len() > 0 && m.q[0].next <= m.now {
			due = append(due, heap.Pop(&m.q).(*client))
		}
		m.rng.Shuffle(len(due), func(i, j int) { due[i], due[j] = due[j], due[i] })
		for _, c := range due {
			m.call(c)
		}
	}
}

// call lets a due client call the downstream, or makes it wait.
func (m *sim) call(c *client) {
	at := epoch.Add(m.now)
	ok, probe := true, false
	switch {
	case m.s.Protected:
		ok, probe = m.protect(c, at)
	case m.s.Hold:
		ok, probe = m.admit(c)
	}
	if !ok {
		return
	}
	c.calls++
	m.res.Attempts++
	if m.now < m.cfg.Down {
		m.res.DownAttempts++
	}
	m.res.Load[m.now/m.cfg.Bucket]++
	ok = m.now >= m.cfg.Down && m.served >= 1
	shed := m.now >= m.cfg.Down && !ok
	if m.s.Protected {
		m.record(&m.circuit, ok, shed, probe, at)
	}
	if m.s.Hold && (m.hold.holding() || m.hold.circuit.Ramp != nil) {
		m.record(&m.hold.circuit, ok, shed, probe, at)
	}
	if ok {
		m.succeeded()
		return
	}
	if m.failed(c) {
		return
	}
	c.prev = m.bo.Delay(c.calls, c.prev, m.rng)
	m.wait(c, c.prev)
}

// protect asks the shared breaker, its ramp and the retry budget whether a
// due client may call, and makes it wait if not. It reports whether the
// client may call, and whether as the breaker's probe.
func (m *sim) protect(c *client, at time.Time) (ok, probe bool) {
	v := m.bs.Allow(&m.circuit, at)
	switch {
	case !v.Allow:
		m.wait(c, v.Retry.Sub(epoch)-m.now+m.jitter(time.Second))
		return false, false
	case !v.Probe && !m.ramp(c, &m.circuit, at):
		return false, false
	case c.calls > 0 && !m.budget.Withdraw():
		c.prev = m.bo.Delay(c.calls, c.prev, m.rng)
		m.wait(c, c.prev)
		return false, false
	case c.calls == 0:
		m.budget.Deposit()
	}
	return true, v.Probe
}

// ramp asks a closed circuit's ramp whether a client may call now, as a
// grit worker asks it for what it claimed; if not, the client waits the
// time the ramp gives it.
func (m *sim) ramp(c *client, circuit *breaker.Circuit, at time.Time) bool {
	a := m.bs.Admit(circuit, 1, at)
	if a.Go == 1 {
		return true
	}
	m.wait(c, a.Wait[0])
	return false
}

// record tells a circuit how a call ended, as a grit worker's gate does: a
// call shed for want of capacity is a resource failure, which the breaker
// does not count but its ramp backs off from (a probe shed tells that the
// downstream is up).
func (m *sim) record(circuit *breaker.Circuit, ok, shed, probe bool, at time.Time) {
	switch {
	case probe:
		m.bs.Record(circuit, ok || shed, true, at)
	case shed:
		m.bs.Shed(circuit, at)
	default:
		m.bs.Record(circuit, ok, false, at)
	}
}

func (m *sim) succeeded() {
	m.served--
	m.done++
	m.last = m.now
	if m.s.Hold {
		m.hold.success = m.now
	}
}

// failed counts a client's failed call toward poison: while the
// downstream is down every failure is the same error; once it is up, a
// call fails only when it is shed for want of capacity, a different
// error that a worker marks as a resource failure, which is never poison.
// With the hold, every failure while down is judged, as grit's gate
// judges poison and retries alike. It reports whether the failure put the
// client on hold.
func (m *sim) failed(c *client) bool {
	if m.now >= m.cfg.Down {
		c.streak = 0
		return false
	}
	c.streak++
	poison := c.streak >= poisonAfter
	held := (poison || m.s.Hold) && m.poisoned(c, poison)
	if m.s.Hold {
		m.hold.failed(m.now, c.id)
	}
	return held
}

// wait puts a client back to call again after d (at least a tick).
func (m *sim) wait(c *client, d time.Duration) {
	c.next = m.now + max(d, m.cfg.Tick)
	heap.Push(&m.q, c)
}

func (m *sim) jitter(d time.Duration) time.Duration {
	return time.Duration(m.rng.Float64() * float64(d))
}

func (m *sim) result() Result {
	r := m.res
	perSec := float64(time.Second) / float64(m.cfg.Bucket)
	for i := range r.Load {
		r.Load[i] *= perSec
	}
	from := int(m.cfg.Down / m.cfg.Bucket)
	for _, l := range r.Load[from:] {
		r.PeakMultiple = max(r.PeakMultiple, l/m.cfg.Capacity)
	}
	r.Left = m.cfg.Clients - m.done
	r.Drained = r.Left == 0
	end := m.last
	if !r.Drained {
		end = m.cfg.Horizon
	}
	r.DrainS = max(end-m.cfg.Down, 0).Seconds()
	r.Load = r.Load[:min(len(r.Load), int(m.now/m.cfg.Bucket)+1)]
	return r
}
