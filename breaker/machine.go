package breaker

import "time"

// Verdict is what Allow decides for one attempt.
type Verdict struct {
	Allow bool
	// Probe marks an attempt a half-open circuit let through: report its
	// end to Record with probe set.
	Probe bool
	// Share is the part of the group's usual dispatch that may go now: 1
	// when closed and settled, less while a closed circuit ramps up, 0 when
	// nothing but this probe may go.
	Share float64
	// Retry is when to ask again, when the attempt may not go.
	Retry time.Time
}

// Allow decides whether an attempt of the circuit's group may start at now,
// and moves an open circuit whose cool-down has passed to half-open.
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
		if !now.Before(c.Since.Add(c.CoolDown)) && c.ProbesOut > 0 {
			// Probes that never reported (their worker died) give their
			// places back after a cool-down.
			c.Since, c.ProbesOut = now, 0
		}
		if c.ProbesOK+c.ProbesOut < s.Probes {
			c.ProbesOut++
			return Verdict{Allow: true, Probe: true}
		}
		return Verdict{Retry: c.Since.Add(c.CoolDown)}
	}
	return Verdict{Allow: true, Share: s.share(*c, now)}
}

// Share is the part of the group's usual dispatch that may go at now,
// without changing the circuit: 0 unless it is closed, less than 1 while
// it ramps up after closing. A dispatcher scales its limit for the group
// by it.
func (s Settings) Share(c Circuit, now time.Time) float64 {
	if c.state() != Closed {
		return 0
	}
	return s.withDefaults().share(c, now)
}

// share is the ramp of a closed circuit.
func (s Settings) share(c Circuit, now time.Time) float64 {
	if s.RampUp < 0 || c.Opens == 0 {
		return 1
	}
	done := float64(now.Sub(c.Since)) / float64(s.RampUp)
	if done >= 1 {
		return 1
	}
	return s.RampStart + (1-s.RampStart)*max(done, 0)
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

func (s Settings) close(c *Circuit, now time.Time) {
	*c = Circuit{State: Closed, Since: now, Opens: c.Opens}
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
func (s Settings) Close(c *Circuit, now time.Time) { s.close(c, now) }

// Reset forgets everything: closed, nothing counted, no ramp.
func (s Settings) Reset(c *Circuit) { *c = Circuit{} }
