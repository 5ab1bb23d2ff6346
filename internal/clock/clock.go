// Package clock is the time the engine and the gate run on: the real
// clock in production, a Fake that tests move by hand, so that leases,
// breakers and budgets are tested without sleeping.
package clock

import (
	"sync"
	"time"
)

// Clock tells the time and makes timers and tickers on it.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
	NewTicker(d time.Duration) Ticker
}

// Timer is a time.Timer on a Clock.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
	Reset(d time.Duration) bool
}

// Ticker is a time.Ticker on a Clock.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// Real is the machine's clock.
var Real Clock = real{}

type real struct{}

func (real) Now() time.Time                   { return time.Now() }
func (real) NewTimer(d time.Duration) Timer   { return realTimer{time.NewTimer(d)} }
func (real) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time        { return t.t.C }
func (t realTimer) Stop() bool                 { return t.t.Stop() }
func (t realTimer) Reset(d time.Duration) bool { return t.t.Reset(d) }

type realTicker struct{ t *time.Ticker }

func (t realTicker) C() <-chan time.Time { return t.t.C }
func (t realTicker) Stop()               { t.t.Stop() }

// Source is a value that keeps time by a Clock of its own and lends it:
// a store on a test's fake clock (package grittest) gives an engine on it
// that clock, so that the engine's timers and the store's due times and
// leases are one time, moved by the test.
type Source interface {
	Clock() Clock
}

// Or returns c, or the real clock when c is nil.
func Or(c Clock) Clock {
	if c == nil {
		return Real
	}
	return c
}

// Fake is a clock that moves only when told (Advance, Set): its timers and
// tickers fire as it passes their times. It is safe for concurrent use.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

// NewFake returns a fake clock at t.
func NewFake(t time.Time) *Fake { return &Fake{now: t} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the clock on by d, firing what falls due.
func (f *Fake) Advance(d time.Duration) { f.Set(f.Now().Add(d)) }

// Set moves the clock to t (never back), firing what falls due: each
// timer once, each ticker once per pass (its channel holds one tick, as a
// time.Ticker's does).
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t.Before(f.now) {
		return
	}
	f.now = t
	for _, tm := range f.timers {
		if tm.active && !tm.at.After(t) {
			select {
			case tm.c <- t:
			default:
			}
			if tm.every > 0 {
				for !tm.at.After(t) {
					tm.at = tm.at.Add(tm.every)
				}
			} else {
				tm.active = false
			}
		}
	}
}

// Waiters counts the timers and tickers waiting to fire: a test advances
// the clock once the code under test is waiting.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, tm := range f.timers {
		if tm.active {
			n++
		}
	}
	return n
}

// NewTimer returns a timer that fires when the clock passes now + d.
func (f *Fake) NewTimer(d time.Duration) Timer { return f.add(d, 0) }

// NewTicker returns a ticker that fires each time the clock passes a
// multiple of d from now.
func (f *Fake) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive interval for NewTicker")
	}
	return fakeTicker{f.add(d, d)}
}

type fakeTicker struct{ t *fakeTimer }

func (t fakeTicker) C() <-chan time.Time { return t.t.c }
func (t fakeTicker) Stop()               { t.t.Stop() }

func (f *Fake) add(d, every time.Duration) *fakeTimer {
	f.mu.Lock()
	defer f.mu.Unlock()
	tm := &fakeTimer{f: f, c: make(chan time.Time, 1), at: f.now.Add(d), every: every, active: true}
	f.timers = append(f.timers, tm)
	if d <= 0 {
		tm.c <- f.now
		tm.active = every > 0
	}
	return tm
}

type fakeTimer struct {
	f      *Fake
	c      chan time.Time
	at     time.Time
	every  time.Duration
	active bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	was := t.active
	t.active = false
	t.f.timers = deleteTimer(t.f.timers, t)
	return was
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	was := t.Stop()
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	t.at, t.active = t.f.now.Add(d), true
	t.f.timers = append(t.f.timers, t)
	return was
}

func deleteTimer(ts []*fakeTimer, t *fakeTimer) []*fakeTimer {
	for i, x := range ts {
		if x == t {
			return append(ts[:i], ts[i+1:]...)
		}
	}
	return ts
}
