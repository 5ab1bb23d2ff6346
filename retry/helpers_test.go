package retry_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// fakeClock advances instantly: Sleep moves Now forward and records the
// delay, so retry schedules are tested without sleeping.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.slept = append(c.slept, d)
	return nil
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *fakeClock) Slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.slept...)
}

// seeded returns a deterministic random source.
func seeded() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

// fixedRand always returns the same value.
type fixedRand float64

func (f fixedRand) Float64() float64 { return float64(f) }
