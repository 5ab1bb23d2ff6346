package batch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/grit-run/grit/retry"
)

// The defaults of the zero Config fields, as documented on each.
const (
	defaultMaxSize     = 50
	defaultInterval    = 100 * time.Millisecond
	defaultPendingX    = 10 // batches' worth of items buffered or in flight
	defaultMaxInFlight = 4
	defaultTimeout     = 30 * time.Second
	defaultRetries     = 3
)

// defaultBackoff draws each delay with equal jitter, so that batchers that
// failed together do not retry together, while each waits at least half its
// step: a downstream that answered slowly gets a breather before the batch
// comes back.
var defaultBackoff retry.Backoff = retry.Exponential{Min: 100 * time.Millisecond, Max: 400 * time.Millisecond, Jitter: retry.JitterEqual}

// Config configures a Batcher. Zero fields mean the defaults given beside
// them; only Flush is required.
type Config[T, R any] struct {
	// Flush sends one batch and returns one result per item, in order. A
	// result slice of another length fails the whole batch with
	// ErrResultCount. To reject single items, return ItemErrors; any other
	// error fails the batch as a whole, which is retried if it is retryable.
	//
	// ctx is the Batcher's, not a caller's: it ends at the attempt's Timeout
	// or when Close gives up waiting, and it carries the batch's retry
	// allowance, which inner retry layers should draw from
	// (retry.AllowanceFrom, as retry.Do does). Flush may run again for the
	// same items after a failure it did not see succeed, so the downstream
	// should deduplicate (grit's writes carry idempotency keys).
	Flush func(ctx context.Context, items []T) ([]R, error)

	// MaxSize is the most items in one batch; 0 means 50.
	MaxSize int
	// Interval is how long the first item of a batch waits for others
	// before the batch is flushed anyway; 0 means 100ms.
	Interval time.Duration
	// MaxPending is the most items buffered or in flight; Send blocks when
	// it is reached. 0 means 10 × MaxSize (500 by default). It must be at
	// least MaxSize, or no batch could fill. An item whose caller gave up
	// keeps its place until its batch comes up for flushing.
	MaxPending int
	// MaxInFlight is the most flushes running at once; later full batches
	// wait their turn. 0 means 4.
	MaxInFlight int

	// Timeout bounds each flush attempt; 0 means 30s, negative means no
	// bound.
	Timeout time.Duration
	// Retries is the batch's retry allowance, shared by this layer and the
	// retry layers inside Flush that draw on it: together they make at most
	// 1 + Retries calls for a batch. 0 means 3; negative means none, at any
	// layer.
	Retries int
	// Retryable tells which failed flushes to retry (a timed-out attempt is
	// retried whatever it says). nil retries the errors retry.Classify finds
	// transient or retry-after; resource pressure is left to the callers,
	// whose policy defers it for longer than a batch's backoff would. The
	// gRPC client passes one for DEADLINE_EXCEEDED, UNAVAILABLE and INTERNAL.
	Retryable func(error) bool
	// Backoff gives the delay before each retry; nil means 100ms doubling up
	// to 400ms, each delay drawn with equal jitter from [half, all] of that. A
	// retry-after error (retry.After) waits at least as long as it asks.
	Backoff retry.Backoff
	// Rand draws the jitter; nil means retry.DefaultRand.
	Rand retry.Rand
	// Clock sleeps between retries; nil means retry.RealClock. Interval and
	// Timeout use the runtime's timers (tests run them in testing/synctest).
	Clock retry.Clock
}

// validate reports the fields that cannot work, saying which and why.
func (c *Config[T, R]) validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if c.Flush == nil {
		bad("Flush is nil: set the function that sends one batch")
	}
	if c.MaxSize < 0 {
		bad("MaxSize is %d: want the most items per batch (e.g. 50), or 0 for %d", c.MaxSize, defaultMaxSize)
	}
	if c.Interval < 0 {
		bad("Interval is %v: want how long a batch waits to fill (e.g. 100ms), or 0 for %v", c.Interval, defaultInterval)
	}
	if c.MaxPending < 0 {
		bad("MaxPending is %d: want the most items buffered or in flight, or 0 for %d × MaxSize", c.MaxPending, defaultPendingX)
	}
	if c.MaxInFlight < 0 {
		bad("MaxInFlight is %d: want the most concurrent flushes (e.g. 4), or 0 for %d", c.MaxInFlight, defaultMaxInFlight)
	}
	if d := c.withDefaults(); c.MaxPending > 0 && d.MaxPending < d.MaxSize {
		bad("MaxPending %d is less than MaxSize %d: no batch could fill; raise MaxPending or lower MaxSize", d.MaxPending, d.MaxSize)
	}
	return errors.Join(errs...)
}

func (c Config[T, R]) withDefaults() Config[T, R] {
	c.MaxSize = positive(c.MaxSize, defaultMaxSize)
	c.Interval = positive(c.Interval, defaultInterval)
	c.MaxPending = positive(c.MaxPending, defaultPendingX*c.MaxSize)
	c.MaxInFlight = positive(c.MaxInFlight, defaultMaxInFlight)
	if c.Timeout == 0 {
		c.Timeout = defaultTimeout
	}
	if c.Retries == 0 {
		c.Retries = defaultRetries
	}
	if c.Retryable == nil {
		c.Retryable = transient
	}
	if c.Backoff == nil {
		c.Backoff = defaultBackoff
	}
	if c.Rand == nil {
		c.Rand = retry.DefaultRand
	}
	if c.Clock == nil {
		c.Clock = retry.RealClock
	}
	return c
}

// transient is the default Retryable.
func transient(err error) bool {
	c, _ := retry.Classify(err)
	return c == retry.ClassTransient || c == retry.ClassAfter
}

// positive returns v when it is above zero, else def. (The package keeps
// its own, to depend on the standard library alone.)
func positive[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}
