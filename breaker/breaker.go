// Package breaker is a circuit breaker's state machine, apart from any
// store: the state is a plain value (Circuit) that a store can keep, so
// that every worker of a fleet sees one breaker per group, and every
// function takes the time it acts at, so that tests need no sleeping and a
// fleet can use its database's clock.
//
// A Circuit is closed while the downstream is healthy. Attempts are
// counted in a sliding window of time buckets; it opens when the failures
// pass a ratio of the attempts (once there are at least MinAttempts) or
// when Consecutive failures come in a row. While open, nothing is let
// through until its cool-down has passed; then it is half-open and lets
// Probes attempts through. As many probe successes close it; one probe
// failure opens it again with a cool-down twice as long. The first
// cool-down is short (CoolDown, a second), so that a short outage ends
// about when the downstream returns; while probes keep failing they go
// less and less often, down to one round each MaxCoolDown (30 seconds).
//
// Once closed, the circuit ramps its group back up (slow start): Admit
// lets calls through at a rate, RampRate a second at first, that grows
// with each success (RampGrowth a success, so by that share of itself a
// second while every call succeeds) and halves when calls fail or are
// shed (at most once a second, never below RampRate). Calls past the rate
// are told when to come back, one after another at the rate, so that a
// backlog held during the outage returns as a stream the downstream has
// just shown it serves, stepped up, and not as a herd. The ramp ends once
// nothing cut its rate for RampUp.
package breaker

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/grit-run/grit/rate"
)

// State is where a circuit is.
type State string

const (
	Closed   State = "closed"
	Open     State = "open"
	HalfOpen State = "half-open"
)

// Settings configures a circuit. Zero fields mean the defaults.
type Settings struct {
	// Window is how far back attempts count, in Buckets slices of time;
	// default 60s in 10.
	Window  time.Duration `json:"window,omitempty"`
	Buckets int           `json:"buckets,omitempty"`
	// FailureRatio opens the circuit once failures ÷ attempts in the window
	// reach it, with at least MinAttempts attempts; default 0.5 and 20.
	FailureRatio float64 `json:"failure_ratio,omitempty"`
	MinAttempts  int     `json:"min_attempts,omitempty"`
	// Consecutive opens the circuit after this many failures in a row,
	// whatever the ratio; default 0, off.
	Consecutive int `json:"consecutive,omitempty"`
	// CoolDown is how long the circuit stays open the first time, and how
	// often calls held while probes are out ask again; each failed probe
	// doubles the cool-down, up to MaxCoolDown; default 1s and 30s (or
	// CoolDown, if longer).
	CoolDown    time.Duration `json:"cool_down,omitempty"`
	MaxCoolDown time.Duration `json:"max_cool_down,omitempty"`
	// Probes is how many attempts a half-open circuit lets through, and how
	// many must succeed to close it; default 3.
	Probes int `json:"probes,omitempty"`
	// RampRate is how many calls a second a circuit lets through just
	// after closing; each success adds RampGrowth to it; the ramp ends once
	// no failure cut the rate for RampUp. Default 10 a second, 0.15 and
	// 30s. A negative RampRate or RampUp turns the ramp off.
	RampRate   float64       `json:"ramp_rate,omitempty"`
	RampGrowth float64       `json:"ramp_growth,omitempty"`
	RampUp     time.Duration `json:"ramp_up,omitempty"`
}

// WithDefaults returns s with its zero fields at their defaults.
func (s Settings) WithDefaults() Settings { return s.withDefaults() }

func (s Settings) withDefaults() Settings {
	s.Window = positive(s.Window, time.Minute)
	if s.Buckets <= 0 {
		s.Buckets = 10
	}
	if s.FailureRatio == 0 {
		s.FailureRatio = 0.5
	}
	if s.MinAttempts <= 0 {
		s.MinAttempts = 20
	}
	s.CoolDown = positive(s.CoolDown, DefaultCoolDown)
	s.MaxCoolDown = positive(s.MaxCoolDown, max(DefaultMaxCoolDown, s.CoolDown))
	if s.Probes <= 0 {
		s.Probes = 3
	}
	if s.RampRate == 0 {
		s.RampRate = DefaultRampRate
	}
	if s.RampGrowth <= 0 {
		s.RampGrowth = DefaultRampGrowth
	}
	if s.RampUp == 0 {
		s.RampUp = DefaultRampUp
	}
	return s
}

// The defaults of Settings' probes and ramp.
const (
	DefaultCoolDown    = time.Second
	DefaultMaxCoolDown = 30 * time.Second
	DefaultRampRate    = 10.0
	DefaultRampGrowth  = 0.15
	DefaultRampUp      = 30 * time.Second
)

// Validate reports settings that cannot work, saying which and why.
func (s Settings) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("breaker: "+format, args...)) }
	if s.Window < 0 || s.CoolDown < 0 || s.MaxCoolDown < 0 {
		bad("negative window %v, cool-down %v or max cool-down %v", s.Window, s.CoolDown, s.MaxCoolDown)
	}
	if !(s.FailureRatio >= 0 && s.FailureRatio <= 1) { // NaN too
		bad("failure ratio %v: want a number from 0 to 1 (e.g. 0.5)", s.FailureRatio)
	}
	if math.IsNaN(s.RampRate) || math.IsInf(s.RampRate, 0) || s.RampRate > 0 && s.RampRate < 0.01 {
		bad("ramp rate %v: want calls a second after closing, at least 0.01 (e.g. 10), or below 0 for no ramp", s.RampRate)
	}
	if !(s.RampGrowth >= 0 && s.RampGrowth <= 10) { // NaN too
		bad("ramp growth %v: want what a success adds to the ramp's rate, from 0 to 10 (e.g. 0.15)", s.RampGrowth)
	}
	if s.Buckets < 0 || s.MinAttempts < 0 || s.Consecutive < 0 || s.Probes < 0 {
		bad("negative buckets, minimum attempts, consecutive failures or probes")
	}
	d := s.withDefaults()
	if d.MaxCoolDown < d.CoolDown {
		bad("max cool-down %v is shorter than the cool-down %v", d.MaxCoolDown, d.CoolDown)
	}
	return errors.Join(errs...)
}

// Bucket counts the attempts that ended in one slice of the window.
type Bucket struct {
	Start     time.Time `json:"start"`
	Successes int       `json:"successes"`
	Failures  int       `json:"failures"`
}

// Circuit is a breaker's whole state, a value to keep in a store. Its zero
// value is a closed circuit with nothing counted.
type Circuit struct {
	State State     `json:"state"`
	Since time.Time `json:"since"` // when it entered State
	// CoolDown is how long an open circuit stays open; the next one's is
	// twice as long while probes keep failing.
	CoolDown    time.Duration `json:"cool_down"`
	Buckets     []Bucket      `json:"buckets,omitempty"`
	Consecutive int           `json:"consecutive"` // failures in a row
	ProbesOut   int           `json:"probes_out"`  // probes let through, not yet reported
	ProbesOK    int           `json:"probes_ok"`
	// Opens counts how often the circuit opened, for operators.
	Opens int `json:"opens"`
	// Ramp is the slow start of a closed circuit after an outage; nil when
	// it lets every call through.
	Ramp *Ramp `json:"ramp,omitempty"`
}

// Ramp is a closed circuit's slow start: a token bucket (of up to a
// second's worth of calls) whose rate grows with successes and halves on
// failures.
type Ramp struct {
	Rate float64   `json:"rate"`         // calls a second it lets through
	Cut  time.Time `json:"cut,omitzero"` // when failures last halved Rate
	rate.Bucket
}

func (c Circuit) state() State {
	if c.State == "" {
		return Closed
	}
	return c.State
}

// positive returns v when it is above zero, else def. (The package keeps
// its own, to depend on the standard library alone.)
func positive[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}
