package retry

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Rand is a source of uniform random numbers in [0, 1). *rand.Rand from
// math/rand/v2 satisfies it; tests inject a seeded one to be deterministic.
// It must be safe for concurrent use if the policy is shared.
type Rand interface {
	Float64() float64
}

type globalRand struct{}

func (globalRand) Float64() float64 { return rand.Float64() }

// DefaultRand is the source used when none is given: math/rand/v2's global
// generator, safe for concurrent use.
var DefaultRand Rand = globalRand{}

// A Backoff computes the delay before a retry.
type Backoff interface {
	// Delay returns the delay before retry n (n = 1 after the first failed
	// attempt). prev is the delay chosen before the previous retry (0 for the
	// first), which decorrelated jitter draws from.
	Delay(n int, prev time.Duration, r Rand) time.Duration
}

// Constant waits the same interval before every retry.
type Constant struct {
	Interval time.Duration
}

// Delay returns the interval.
func (c Constant) Delay(int, time.Duration, Rand) time.Duration { return max(c.Interval, 0) }

// Jitter spreads the delays of an exponential backoff, so that callers that
// failed together do not retry together.
type Jitter uint8

const (
	// JitterFull draws each delay uniformly from [0, exp]: the smoothest load
	// on a recovering downstream. It is the zero value, so the default.
	JitterFull Jitter = iota
	// JitterEqual draws from [exp/2, exp]: a floor of half the delay.
	JitterEqual
	// JitterNone uses exp itself. Callers that failed together retry
	// together: use it only for a single caller.
	JitterNone
)

var jitterNames = [...]string{"full", "equal", "none"}

func (j Jitter) String() string {
	if int(j) < len(jitterNames) {
		return jitterNames[j]
	}
	return fmt.Sprintf("Jitter(%d)", uint8(j))
}

// ParseJitter reads "full", "equal" or "none".
func ParseJitter(s string) (Jitter, error) {
	for i, name := range jitterNames {
		if s == name {
			return Jitter(i), nil
		}
	}
	return 0, fmt.Errorf("retry: jitter %q: want full, equal or none", s)
}

// Exponential grows the delay by Multiplier after each retry, from Min up to
// Max: exp(n) = min(Max, Min × Multiplier^(n-1)), then jittered.
type Exponential struct {
	Min        time.Duration // first delay; 0 means 1s
	Max        time.Duration // cap; 0 means no cap
	Multiplier float64       // growth per retry; 0 means 2
	Jitter     Jitter        // zero value: full jitter
}

// Delay returns the jittered delay before retry n.
func (e Exponential) Delay(n int, _ time.Duration, r Rand) time.Duration {
	exp := e.ceiling(n)
	switch e.Jitter {
	case JitterNone:
		return exp
	case JitterEqual:
		return exp/2 + scale(exp-exp/2, r.Float64())
	default:
		return scale(exp, r.Float64())
	}
}

// ceiling is the un-jittered delay before retry n.
func (e Exponential) ceiling(n int) time.Duration {
	lo := e.Min
	if lo <= 0 {
		lo = time.Second
	}
	m := e.Multiplier
	if m <= 0 {
		m = 2
	}
	f := float64(lo) * math.Pow(m, float64(max(n-1, 0)))
	return clampDuration(f, e.Max)
}

// Decorrelated is the "decorrelated jitter" of the AWS architecture blog's
// analysis of backoff: each delay is drawn uniformly from [Min, 3 × prev],
// capped at Max, so callers drift apart instead of moving in step.
type Decorrelated struct {
	Min time.Duration // floor and first delay's lower bound; 0 means 1s
	Max time.Duration // cap; 0 means no cap
}

// Delay returns min(Max, uniform(Min, 3 × prev)).
func (d Decorrelated) Delay(_ int, prev time.Duration, r Rand) time.Duration {
	lo := d.Min
	if lo <= 0 {
		lo = time.Second
	}
	hi := float64(max(prev, lo)) * 3
	f := float64(lo) + (hi-float64(lo))*r.Float64()
	return clampDuration(f, d.Max)
}

// scale returns d × f for f in [0, 1) without overflow.
func scale(d time.Duration, f float64) time.Duration {
	return time.Duration(float64(d) * f)
}

// clampDuration converts f nanoseconds to a Duration no larger than limit
// (when limit > 0) and no larger than the largest Duration.
func clampDuration(f float64, limit time.Duration) time.Duration {
	if limit > 0 && f >= float64(limit) {
		return limit
	}
	if f >= math.MaxInt64 || math.IsNaN(f) {
		return math.MaxInt64
	}
	return time.Duration(f)
}
