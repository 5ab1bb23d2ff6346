package herd

import (
	"time"

	"github.com/grit-run/grit/breaker"
)

// The outage hold's settings, grit's defaults (gate.Protection): a failure
// is an outage when this many distinct clients failed alike within the
// window and none succeeded in it. poisonAfter is retry.Policy's default:
// the second failure in a row alike is poison.
const (
	outageTasks  = 5
	outageWindow = time.Minute
	poisonAfter  = 2
)

// hold is the outage hold as grit's gate keeps it for a kind: who failed
// alike lately (a store.Spreader's answer), when a call last succeeded,
// until when the outage is known without asking again, and the circuit
// that holds the clients. It uses grit's default breaker settings, as
// grit's hold of a kind does: probes a second after the hold, then less
// often while they fail; once they close the circuit, its ramp lets the
// waiting clients go.
type hold struct {
	fails    []failure // the outage's failures, oldest first, from head on within the window
	head     int
	lastFail []time.Duration // per client, its latest failure in fails; -1 for none
	distinct int             // clients with a failure in the window
	success  time.Duration   // the last success; -1 for none
	known    time.Duration   // the outage is known until then
	circuit  breaker.Circuit
}

type failure struct {
	at time.Duration
	id int
}

func newHold(clients int) *hold {
	h := &hold{lastFail: make([]time.Duration, clients), success: -1}
	for i := range h.lastFail {
		h.lastFail[i] = -1
	}
	return h
}

// failed notes a client's failure with the outage's fingerprint.
func (h *hold) failed(now time.Duration, id int) {
	if h.lastFail[id] < 0 {
		h.distinct++
	}
	h.lastFail[id] = now
	h.fails = append(h.fails, failure{now, id})
}

// expire forgets the failures that left the window.
func (h *hold) expire(now time.Duration) {
	for h.head < len(h.fails) && h.fails[h.head].at < now-outageWindow {
		f := h.fails[h.head]
		if h.lastFail[f.id] == f.at {
			h.lastFail[f.id] = -1
			h.distinct--
		}
		h.head++
	}
	if h.head > len(h.fails)/2 {
		h.fails = append(h.fails[:0], h.fails[h.head:]...)
		h.head = 0
	}
}

// outage tells, as the gate's judge does, whether a poison failure at now
// is an outage: known to be one, or spread over outageTasks clients in
// the window with no success in it.
func (h *hold) outage(now time.Duration) bool {
	if now < h.known {
		return true
	}
	h.expire(now)
	return h.distinct >= outageTasks && (h.success < 0 || h.success < now-outageWindow)
}

// holding reports whether the hold is on: its circuit open or half-open.
func (h *hold) holding() bool {
	return h.circuit.State != "" && h.circuit.State != breaker.Closed
}

// admit asks the hold whether a due client may call: while it is on, only
// as a probe, else the client waits for the next probe time, spread over
// a second as the protected strategies' breaker spreads it; once it is
// off, at its ramp's rate. It reports whether the client may call, and
// whether as a probe.
func (m *sim) admit(c *client) (ok, probe bool) {
	at := epoch.Add(m.now)
	if !m.hold.holding() {
		return m.ramp(c, &m.hold.circuit, at), false
	}
	v := m.bs.Allow(&m.hold.circuit, at)
	if v.Allow {
		return true, v.Probe
	}
	m.held(c)
	m.wait(c, v.Retry.Sub(epoch)-m.now+m.jitter(time.Second))
	return false, false
}

// poisoned handles a client's failure, poison or not: with the hold and
// an outage, the client is held until the next probe; else poison is
// dead-lettered (counted; the simulation retries it anyway). It reports
// whether the client was held.
func (m *sim) poisoned(c *client, poison bool) bool {
	if !m.s.Hold || !m.hold.outage(m.now) {
		if poison && !c.dead {
			c.dead = true
			m.res.DeadLettered++
		}
		return false
	}
	at := epoch.Add(m.now)
	if !m.hold.holding() {
		m.bs.Trip(&m.hold.circuit, at, 0)
	}
	m.hold.known = m.now + outageWindow
	m.held(c)
	m.wait(c, max(m.hold.circuit.NextProbe().Sub(at), 0)+m.jitter(time.Second))
	return true
}

func (m *sim) held(c *client) {
	if !c.held {
		c.held = true
		m.res.Held++
	}
}
