package breaker

import (
	"time"

	"github.com/grit-run/grit/rate"
)

// Verdict is what Allow decides for one attempt.
type Verdict struct {
	Allow bool
	// Probe marks an attempt a half-open circuit let through: report its
	// end to Record with probe set.
	Probe bool
	// Retry is when to ask again, when the attempt may not go.
	Retry time.Time
}

// Allow decides whether an attempt of the circuit's group may start at now,
// and moves an open circuit whose cool-down has passed to half-open. A
// closed circuit allows every attempt; one that ramps up after closing
// lets them start at its rate (Admit).
func (s Settings) Allow(c *Circuit, now time.Time) Verdict {
	s = s.withDefaults()
	switch c.state() {
	case Open:
		if until := c.Since.Add(c.CoolDown); now.Before(until) {
			return Verdict{Retry: until}
		}
		c.State, c.Since, c.ProbesOut, c.ProbesOK = HalfOpen, now, 0, 0
		fallthrough
	case HalfOpen:
		if !now.Before(c.Since.Add(s.MaxCoolDown)) && c.ProbesOut > 0 {
			// Probes that never reported (their worker died) give their
			// places back after the longest cool-down.
			c.Since, c.ProbesOut = now, 0
		}
		if c.ProbesOK+c.ProbesOut < s.Probes {
			c.ProbesOut++
			return Verdict{Allow: true, Probe: true}
		}
		// The probes out answer soon: ask again after the first cool-down.
		return Verdict{Retry: now.Add(s.CoolDown)}
	}
	return Verdict{Allow: true}
}

// Admit asks a closed circuit for n calls at now: all of them, unless it
// ramps up after closing; then as many as its rate has tokens for, and
// the others are told when to come back (rate.Bucket.TakeGrowing). A
// circuit that is not closed (another worker's results opened it again)
// admits none, and tells each to come back at its next probe, or a
// cool-down from now (ask Allow for probes).
func (s Settings) Admit(c *Circuit, n int, now time.Time) rate.Admission {
	s = s.withDefaults()
	if c.state() != Closed {
		wait := c.NextProbe().Sub(now)
		if wait <= 0 {
			wait = s.CoolDown // half-open: the probes out answer soon
		}
		a := rate.Admission{Wait: make([]time.Duration, n)}
		for i := range a.Wait {
			a.Wait[i] = wait
		}
		return a
	}
	r := c.Ramp
	if r == nil || !now.Before(r.end(*c, s)) {
		c.Ramp = nil
		return rate.Admission{Go: n}
	}
	return r.TakeGrowing(n, r.Rate, r.Rate, s.RampGrowth, now)
}

// Ramping tells whether a closed circuit still ramps up at now: Admit may
// turn calls away.
func (s Settings) Ramping(c Circuit, now time.Time) bool {
	return c.state() == Closed && c.Ramp != nil && now.Before(c.Ramp.end(c, s.withDefaults()))
}

// Shed tells a ramping circuit that its downstream turned a call away for
// want of capacity (a resource failure, which the breaker does not count):
// the ramp halves its rate, as after a failure.
func (s Settings) Shed(c *Circuit, now time.Time) {
	if c.state() == Closed && c.Ramp != nil {
		c.Ramp.cut(s.withDefaults(), now)
	}
}

// end is when the ramp ends: RampUp after the circuit closed, or after its
// rate was last cut.
func (r *Ramp) end(c Circuit, s Settings) time.Time {
	since := c.Since
	if r.Cut.After(since) {
		since = r.Cut
	}
	return since.Add(s.RampUp)
}

// grow adds a success's step to the rate.
func (r *Ramp) grow(s Settings) { r.Rate += s.RampGrowth }

// cut halves the rate, at most once a second (the calls that fail
// together tell of one congestion), never below the starting rate.
func (r *Ramp) cut(s Settings, now time.Time) {
	if !r.Cut.IsZero() && now.Sub(r.Cut) < time.Second {
		return
	}
	r.Refill(r.Rate, r.Rate, now)
	r.Rate, r.Cut = max(r.Rate/2, s.RampRate), now
	r.Tokens = min(r.Tokens, max(r.Rate, 1))
	r.NextRate = min(r.NextRate, r.Rate) // the schedule's hopes go too
}

// Record counts an attempt of the group that ended at now, and moves the
// circuit: a closed one opens past its thresholds; a half-open one closes
// after enough probe successes and opens again, for twice as long, after a
// probe failure. probe says whether Allow let the attempt through as a
// probe.
func (s Settings) Record(c *Circuit, ok, probe bool, now time.Time) {
	s = s.withDefaults()
	s.count(c, ok, now)
	switch c.state() {
	case Closed:
		if r := c.Ramp; r != nil {
			if ok {
				r.grow(s)
			} else {
				r.cut(s, now)
			}
		}
		if ok {
			c.Consecutive = 0
			return
		}
		c.Consecutive++
		if s.tripped(*c, now) {
			s.open(c, now, s.CoolDown)
		}
	case HalfOpen:
		if !probe {
			return // began before the circuit opened: it says nothing of now
		}
		c.ProbesOut = max(c.ProbesOut-1, 0)
		if !ok {
			s.open(c, now, min(2*c.CoolDown, s.MaxCoolDown))
			return
		}
		if c.ProbesOK++; c.ProbesOK >= s.Probes {
			s.close(c, now)
		}
	}
}

func (s Settings) tripped(c Circuit, now time.Time) bool {
	if s.Consecutive > 0 && c.Consecutive >= s.Consecutive {
		return true
	}
	failures, attempts := s.Counts(c, now)
	return attempts >= s.MinAttempts && float64(failures) >= s.FailureRatio*float64(attempts)
}

func (s Settings) open(c *Circuit, now time.Time, coolDown time.Duration) {
	*c = Circuit{State: Open, Since: now, CoolDown: max(coolDown, s.CoolDown), Opens: c.Opens + 1}
}

// close closes the circuit and starts its ramp, unless the settings turn
// it off.
func (s Settings) close(c *Circuit, now time.Time) {
	*c = Circuit{State: Closed, Since: now, Opens: c.Opens}
	if s.RampRate > 0 && s.RampUp > 0 {
		c.Ramp = &Ramp{Rate: s.RampRate, Bucket: rate.Bucket{Tokens: 1, Last: now}}
	}
}

// count adds an attempt to the window and drops the buckets that left it.
func (s Settings) count(c *Circuit, ok bool, now time.Time) {
	width := s.Window / time.Duration(s.Buckets)
	start := now.Truncate(width)
	s.prune(c, now)
	if n := len(c.Buckets); n == 0 || c.Buckets[n-1].Start.Before(start) {
		c.Buckets = append(c.Buckets, Bucket{Start: start})
	}
	b := &c.Buckets[len(c.Buckets)-1]
	if ok {
		b.Successes++
	} else {
		b.Failures++
	}
}

func (s Settings) prune(c *Circuit, now time.Time) {
	width := s.Window / time.Duration(s.Buckets)
	oldest := now.Add(-s.Window).Truncate(width)
	i := 0
	for i < len(c.Buckets) && !c.Buckets[i].Start.After(oldest) {
		i++
	}
	c.Buckets = c.Buckets[i:]
}

// Counts returns the failures and attempts in the window at now.
func (s Settings) Counts(c Circuit, now time.Time) (failures, attempts int) {
	s = s.withDefaults()
	s.prune(&c, now)
	for _, b := range c.Buckets {
		failures += b.Failures
		attempts += b.Failures + b.Successes
	}
	return failures, attempts
}

// NextProbe is when an open circuit lets its first probe through; zero for
// a circuit that is not open.
func (c Circuit) NextProbe() time.Time {
	if c.state() != Open {
		return time.Time{}
	}
	return c.Since.Add(c.CoolDown)
}

// Trip opens the circuit at once, for an operator: for the cool-down, or
// d if longer.
func (s Settings) Trip(c *Circuit, now time.Time, d time.Duration) {
	s = s.withDefaults()
	s.open(c, now, d)
}

// Close closes the circuit at once, for an operator; dispatch ramps up as
// after probes succeed.
func (s Settings) Close(c *Circuit, now time.Time) { s.withDefaults().close(c, now) }

// Reset forgets everything: closed, nothing counted, no ramp.
func (s Settings) Reset(c *Circuit) { *c = Circuit{} }
