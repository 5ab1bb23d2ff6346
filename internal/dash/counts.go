package dash

import (
	"context"
	"sync"
	"time"

	"github.com/grit-run/grit/store"
)

// Counting the tasks of each queue by state reads every task: on a store
// of a million, a second on SQLite and a tenth of one on PostgreSQL. A
// page must not wait for that, nor should an open page make the store do
// it every second. So the dashboard keeps the last count and counts again
// in the background once it is older than twenty times what counting
// took (at least every 2s, at most every minute): on a small store the
// counts are live, on a large one they cost at most a twentieth of the
// database's time while someone looks, and a page shows how old they are.

const (
	minCountAge = 2 * time.Second
	maxCountAge = time.Minute
)

type counter struct {
	o   store.Overview
	log func(msg string, args ...any)

	mu       sync.Mutex
	counts   []store.QueueCount
	at       time.Time
	took     time.Duration
	counting bool
	err      error
}

// get returns the latest counts and when they were taken, counting now
// only when there are none yet; stale counts are counted again in the
// background.
func (c *counter) get(ctx context.Context) ([]store.QueueCount, time.Time, error) {
	c.mu.Lock()
	if c.at.IsZero() {
		c.mu.Unlock()
		return c.count(ctx)
	}
	counts, at := c.counts, c.at
	if time.Since(at) > c.maxAge() && !c.counting {
		c.counting = true
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), maxCountAge)
			defer cancel()
			if _, _, err := c.count(ctx); err != nil {
				c.log("dashboard: could not count the tasks", "err", err)
			}
		}()
	}
	c.mu.Unlock()
	return counts, at, nil
}

// maxAge is how old counts may get before they are counted again.
func (c *counter) maxAge() time.Duration {
	return min(max(20*c.took, minCountAge), maxCountAge)
}

func (c *counter) count(ctx context.Context) ([]store.QueueCount, time.Time, error) {
	start := time.Now()
	counts, err := c.o.QueueCounts(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counting = false
	if err != nil {
		return c.counts, c.at, err
	}
	c.counts, c.at, c.took = counts, start, time.Since(start)
	return counts, start, nil
}
