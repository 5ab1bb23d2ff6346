package dash

import (
	"context"
	"sync"
	"time"

	"github.com/grit-run/grit/internal/keep"
)

// Some of what the overview shows reads many tasks: counting every task
// of each queue by state reads them all (on a million, a second on
// SQLite, a tenth of one on PostgreSQL), and the last hour's successes
// are as many as the hour had. A page must not wait for that, nor should
// an open page make the store do it every second. So the dashboard keeps
// the last answer of each, and asks again in the background once it is
// older than keep.For allows (twenty times what asking took, at least 2s,
// at most a minute): on a small store they are live, on a large one they
// cost at most a twentieth of the database's time while someone looks,
// and the overview shows how old its counts are. Only the first look
// after the dashboard starts waits.

// minCachedAge is the freshest the dashboard asks for: a look every 2s
// at least, on a store that answers at once.
const minCachedAge = 2 * time.Second

// cached keeps the last value load gave.
type cached[T any] struct {
	load func(context.Context) (T, error)
	log  func(msg string, args ...any)
	what string

	mu      sync.Mutex
	val     T
	at      time.Time
	took    time.Duration
	loading bool
}

func newCached[T any](what string, log func(string, ...any), load func(context.Context) (T, error)) *cached[T] {
	return &cached[T]{load: load, log: log, what: what}
}

// get returns the latest value and when it was loaded, loading now only
// when there is none yet; a stale value is loaded again in the
// background.
func (c *cached[T]) get(ctx context.Context) (T, time.Time, error) {
	c.mu.Lock()
	if c.at.IsZero() {
		c.mu.Unlock()
		return c.refresh(ctx)
	}
	val, at := c.val, c.at
	if time.Since(at) > c.maxAge() && !c.loading {
		c.loading = true
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), keep.Most)
			defer cancel()
			if _, _, err := c.refresh(ctx); err != nil {
				c.log("dashboard: could not read "+c.what, "err", err)
			}
		}()
	}
	c.mu.Unlock()
	return val, at, nil
}

// maxAge is how old the value may get before it is loaded again.
func (c *cached[T]) maxAge() time.Duration { return keep.For(c.took, minCachedAge) }

func (c *cached[T]) refresh(ctx context.Context) (T, time.Time, error) {
	start := time.Now()
	val, err := c.load(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loading = false
	if err != nil {
		return c.val, c.at, err
	}
	c.val, c.at, c.took = val, start, time.Since(start)
	return val, start, nil
}
