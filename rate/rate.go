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
	// the next one turned away comes back one interval later.
	Next time.Time `json:"next,omitzero"`
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
	if !(rate > 0) || math.IsInf(rate, 1) {
		return Admission{Go: n}
	}
	b.Refill(rate, burst, now)
	var a Admission
	for a.Go < n && b.Tokens >= 1 {
		b.Tokens--
		a.Go++
	}
	if a.Go == n {
		return a
	}
	every := seconds(1 / rate)
	// The first one turned away goes when the bucket next holds a token,
	// or one interval after the last one told to come back.
	next := now.Add(seconds((1 - b.Tokens) / rate)).Add(-every)
	if b.Next.After(next) {
		next = b.Next
	}
	for range n - a.Go {
		next = next.Add(every)
		a.Wait = append(a.Wait, next.Sub(now))
	}
	b.Next = next
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
