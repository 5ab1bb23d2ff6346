// Package rate is a token bucket kept as a plain value (Bucket), so that a
// store can keep it for a whole fleet: every function takes the time it
// acts at, and what it decides is a value to write back. Calls a bucket
// cannot take now are not simply refused: each is told when to come
// back, one after another at the rate, after those told before it, so
// that a backlog returns as a stream and not as a herd at the next token.
//
// grit uses it for the ramp of a circuit breaker that has just closed
// (breaker.Ramp) and for the rate limits of queues, kinds, groups and
// tenants.
package rate

import (
	"fmt"
	"math"
	"time"
)

// Bucket is a token bucket's state. Its zero value is full.
type Bucket struct {
	Tokens float64   `json:"tokens"` // calls it may let through at once
	Last   time.Time `json:"last"`   // when Tokens was counted; zero: never (full)
	// Next is when the last call it turned away was told to come back:
	// the next one turned away comes back one interval later. NextRate is
	// the rate the schedule expected by then (TakeGrowing).
	Next     time.Time `json:"next,omitzero"`
	NextRate float64   `json:"next_rate,omitempty"`
}

// Admission is what Take lets through of n calls.
type Admission struct {
	// Go is how many may start now.
	Go int
	// Wait, for each of the n-Go others in turn, is how long it waits
	// before it asks again: one after another at the rate, after those
	// turned away before them.
	Wait []time.Duration
}

// Take asks the bucket for n calls at now, at rate calls a second with at
// most burst at once (burst below 1 counts as 1): as many go as it holds
// tokens for; the others are told when to come back. A rate that is not
// above zero lets every call through.
func (b *Bucket) Take(n int, rate, burst float64, now time.Time) Admission {
	return b.TakeGrowing(n, rate, burst, 0, now)
}

// TakeGrowing is Take for a rate that is expected to grow by growth with
// each call let through (a ramp that grows while calls succeed): the
// calls turned away are told to come back at the times the grown rate
// would let them go, not at today's rate, so that a backlog returns as
// fast as the ramp will take it. If the rate does not grow as expected,
// those that come back too soon are turned away again, after the others.
func (b *Bucket) TakeGrowing(n int, rate, burst, growth float64, now time.Time) Admission {
	if !(rate > 0) || math.IsInf(rate, 1) {
		return Admission{Go: n}
	}
	b.Refill(rate, burst, now)
	var a Admission
	for a.Go < n && b.Tokens >= 1-1e-9 { // a token, but for rounding
		b.Tokens--
		a.Go++
	}
	b.Tokens = max(b.Tokens, 0)
	if a.Go == n {
		return a
	}
	// The first one turned away goes when the bucket next holds a token,
	// or one interval after the last one told to come back.
	next, r := now.Add(max(seconds((1-b.Tokens)/rate), time.Microsecond)), rate
	if later := max(b.NextRate, rate); b.Next.After(next.Add(-seconds(1 / later))) {
		next, r = b.Next.Add(seconds(1/later)), later
	}
	for i := range n - a.Go {
		if i > 0 {
			next = next.Add(seconds(1 / r))
		}
		a.Wait = append(a.Wait, next.Sub(now))
		r += max(growth, 0)
	}
	b.Next, b.NextRate = next, r
	return a
}

// Give puts back n tokens taken but not used (the calls they let
// through were held back by something else), up to burst (at least 1).
func (b *Bucket) Give(n int, burst float64) {
	b.Tokens = min(b.Tokens+float64(n), max(burst, 1))
}

// Refill adds the tokens that came in since the bucket was last counted,
// up to burst (at least 1); a bucket never counted is full.
func (b *Bucket) Refill(rate, burst float64, now time.Time) {
	burst = max(burst, 1)
	switch dt := now.Sub(b.Last); {
	case b.Last.IsZero():
		b.Tokens, b.Last = burst, now
	case dt > 0:
		b.Tokens, b.Last = min(b.Tokens+rate*dt.Seconds(), burst), now
	}
	b.Tokens = min(b.Tokens, burst)
}

// Limit is a rate and a burst, as people write it: "5/s", "300/m",
// "5/s burst 20".
type Limit struct {
	Rate  float64 `json:"rate"`  // calls a second
	Burst float64 `json:"burst"` // calls at once; 0: one second's worth, at least 1
}

// BurstOr is the burst the limit allows at once: Burst, or one second's
// worth of its rate, at least 1.
func (l Limit) BurstOr() float64 {
	if l.Burst > 0 {
		return l.Burst
	}
	return max(l.Rate, 1)
}

func (l Limit) String() string {
	var s string
	switch {
	case l.Rate >= 1 || l.Rate == 0:
		s = fmt.Sprintf("%g/s", l.Rate)
	default:
		s = fmt.Sprintf("%g/m", l.Rate*60)
	}
	if l.Burst > 0 {
		s += fmt.Sprintf(" burst %g", l.Burst)
	}
	return s
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
