// Package herd simulates a thundering herd: N clients that each need one
// call to succeed against a downstream of fixed capacity, which is down
// for a while when they start. Every client retries with the same backoff;
// what differs between strategies is the jitter, and whether the clients
// share a retry budget and a circuit breaker, or grit's outage hold. The
// simulation steps a clock of its own in ticks, so it is fast and, for a
// seed, deterministic.
//
// The downstream serves Capacity calls a second, and absorbs a burst of a
// bucket's worth (a tenth of a second's by default); while down, and
// beyond that, a call fails at once. A client whose call fails waits its
// backoff delay and calls again, without limit. With protection on, a
// retry first takes a token from a shared retry.Budget (none: it waits one
// more delay without calling), and every call first asks a shared
// breaker.Circuit (open: it waits until the next probe time, spread over a
// second; ramping up after closing: it goes if the ramp has a token, else
// comes back when the ramp tells it).
//
// Every failure while the downstream is down is the same error, so a
// client's second one is poison to grit's default retry policy: Result
// counts those clients as dead-lettered, though the simulation keeps them
// calling. With the hold on, any failure, once outageTasks clients failed
// alike within outageWindow and none succeeded, trips the hold instead:
// every client waits, using no attempt, while probes go a second later,
// then less and less often while they fail. The hold lifts when the probes
// succeed, and then its ramp lets the waiting clients go, starting slow
// and growing with each success. The breaker's decisions (Allow, Admit,
// Record, Shed) are grit's own, with grit's default settings: the same
// code decides for a worker's gate.
package herd

import (
	"fmt"
	"math"
	"time"

	"github.com/grit-run/grit/internal/or"
	"github.com/grit-run/grit/retry"
)

// Config is one simulation's scenario. Zero fields mean the defaults.
type Config struct {
	Clients  int           // default 5,000
	Capacity float64       // calls per second the downstream serves; default 500
	Down     time.Duration // how long the downstream is down from the start; default 30s
	Spread   time.Duration // the clients' first calls are spread over this; default 1s
	Min, Max time.Duration // the backoff's first delay and cap; default 500ms and 30s
	Tick     time.Duration // the clock's step; default 10ms
	Horizon  time.Duration // the simulation stops here even if clients are left; default 30m
	Bucket   time.Duration // load is measured over buckets this long; default 100ms
	Seed     uint64
}

func (c Config) withDefaults() Config {
	c.Clients = or.Positive(c.Clients, 5000)
	if c.Capacity <= 0 {
		c.Capacity = 500
	}
	c.Down = or.Positive(c.Down, 30*time.Second)
	c.Spread = or.Positive(c.Spread, time.Second)
	c.Min = or.Positive(c.Min, 500*time.Millisecond)
	c.Max = or.Positive(c.Max, 30*time.Second)
	c.Tick = or.Positive(c.Tick, 10*time.Millisecond)
	c.Horizon = or.Positive(c.Horizon, 30*time.Minute)
	c.Bucket = or.Positive(c.Bucket, 100*time.Millisecond)
	return c
}

// Validate reports a scenario that cannot be simulated.
func (c Config) Validate() error {
	switch {
	case c.Clients < 0 || c.Clients > 10_000_000:
		return fmt.Errorf("herd: %d clients: want 1 to 10,000,000", c.Clients)
	case c.Capacity < 0 || math.IsNaN(c.Capacity) || math.IsInf(c.Capacity, 0):
		return fmt.Errorf("herd: capacity %v: want a positive number of calls per second", c.Capacity)
	case c.Down < 0 || c.Spread < 0 || c.Min < 0 || c.Max < 0 || c.Tick < 0 || c.Horizon < 0 || c.Bucket < 0:
		return fmt.Errorf("herd: negative duration")
	}
	d := c.withDefaults()
	if d.Max < d.Min {
		return fmt.Errorf("herd: backoff cap %v below its first delay %v", d.Max, d.Min)
	}
	if d.Bucket < d.Tick || d.Horizon <= d.Down {
		return fmt.Errorf("herd: the bucket (%v) must be at least a tick (%v), and the horizon (%v) past the outage (%v)", d.Bucket, d.Tick, d.Horizon, d.Down)
	}
	return nil
}

// Strategy is how the clients retry.
type Strategy struct {
	Jitter    string // "none", "equal", "full" or "decorrelated"
	Protected bool   // a shared retry budget and circuit breaker
	// Hold is grit's outage hold: a failure that would dead-letter its
	// client as poison, when many clients failed alike lately and none
	// succeeded, holds them all instead, as an open breaker does, until a
	// probe succeeds (see hold.go).
	Hold bool
}

func (s Strategy) String() string {
	name := s.Jitter
	if s.Protected {
		name += "+budget+breaker"
	}
	if s.Hold {
		name += "+hold"
	}
	return name
}

// Strategies are every jitter: unprotected, with the budget and breaker,
// and with the outage hold.
func Strategies() []Strategy {
	var out []Strategy
	for _, p := range []Strategy{{}, {Protected: true}, {Hold: true}} {
		for _, j := range []string{"none", "equal", "full", "decorrelated"} {
			p.Jitter = j
			out = append(out, p)
		}
	}
	return out
}

// ParseStrategy reads a strategy's name, as String writes it.
func ParseStrategy(name string) (Strategy, error) {
	for _, s := range Strategies() {
		if s.String() == name {
			return s, nil
		}
	}
	return Strategy{}, fmt.Errorf("herd: unknown strategy %q (want none, equal, full or decorrelated, each optionally with +budget+breaker or +hold)", name)
}

func (s Strategy) backoff(c Config) (retry.Backoff, error) {
	if s.Protected && s.Hold {
		return nil, fmt.Errorf("herd: strategy %s: the budget and breaker with the hold is not simulated; want one or the other", s)
	}
	switch s.Jitter {
	case "none":
		return retry.Exponential{Min: c.Min, Max: c.Max, Jitter: retry.JitterNone}, nil
	case "equal":
		return retry.Exponential{Min: c.Min, Max: c.Max, Jitter: retry.JitterEqual}, nil
	case "full":
		return retry.Exponential{Min: c.Min, Max: c.Max, Jitter: retry.JitterFull}, nil
	case "decorrelated":
		return retry.Decorrelated{Min: c.Min, Max: c.Max}, nil
	}
	return nil, fmt.Errorf("herd: unknown jitter %q", s.Jitter)
}

// Result is what one strategy did.
type Result struct {
	Strategy string `json:"strategy"`
	// PeakMultiple is the highest load on the downstream after it came
	// back, over one bucket, as a multiple of its capacity.
	PeakMultiple float64 `json:"peak_multiple"`
	// DrainS is how long after the downstream came back the last client
	// succeeded; Drained is false if some had not by the horizon.
	DrainS   float64 `json:"drain_s"`
	Drained  bool    `json:"drained"`
	Attempts int     `json:"attempts"` // calls that reached the downstream
	// DownAttempts are the calls made while the downstream was down.
	DownAttempts int `json:"down_attempts"`
	Left         int `json:"left"` // clients that had not succeeded at the horizon
	// DeadLettered counts the clients that grit's poison detection (the
	// second failure in a row alike: retry.Policy.PoisonAfter's default)
	// dead-letters while the downstream is down; with the hold, only those
	// whose failure it did not take for an outage. The simulation keeps
	// every client calling until it succeeds, so that the other figures
	// compare: this is the work grit would have dead-lettered.
	DeadLettered int `json:"dead_lettered"`
	// Held counts the clients the outage hold kept waiting, using no
	// attempt, at least once.
	Held int `json:"held"`
	// Load is the calls per second that reached the downstream, per bucket
	// from the start (for plotting; not in JSON).
	Load []float64 `json:"-"`
}

// client is one caller: when it calls next, and its retry state.
type client struct {
	next   time.Duration
	calls  int           // calls made
	prev   time.Duration // the last delay
	id     int
	streak int  // failures in a row alike (while the downstream is down)
	dead   bool // counted in DeadLettered
	held   bool // counted in Held
}

type queue []*client

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].next != q[j].next {
		return q[i].next < q[j].next
	}
	return q[i].id < q[j].id
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(*client)) }
func (q *queue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}
