package retry

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Clock is the time Do reads and sleeps on. Tests inject one that advances
// instantly; the default is the real clock.
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx is done, and then returns
	// context.Cause(ctx).
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// RealClock is the clock Do uses unless told otherwise.
var RealClock Clock = realClock{}

// Notice tells a notify hook about one failed attempt and what Do decided.
type Notice struct {
	Attempt  int   // the call of op that failed, from 1 (deferrals included)
	Err      error // its error
	Decision Decision
}

// Option configures one call of Do.
type Option struct {
	policy    Policy
	hasPolicy bool
	notify    func(Notice)
	clock     Clock
	budget    *Budget
	own       bool
}

// WithPolicy sets the policy; the default is CommonFourTimes.
func WithPolicy(p Policy) Option { return Option{policy: p, hasPolicy: true} }

// WithNotify calls fn after every failed attempt, with the decision taken.
func WithNotify(fn func(Notice)) Option { return Option{notify: fn} }

// WithClock sets the clock; the default is the real one.
func WithClock(c Clock) Option { return Option{clock: c} }

// WithBudget draws retries from a shared token-bucket budget: each call
// deposits, each retry withdraws, and a retry the budget refuses stops Do
// with ReasonBudget.
func WithBudget(b *Budget) Option { return Option{budget: b} }

// WithOwnAllowance makes this call of Do a new logical call: it draws
// nothing from an allowance the context carries, and sets its own for
// itself and the layers under it, as the outermost Do does. Use it where an
// op retried inside another is, for once, a separate piece of work whose
// retries must not spend its caller's.
func WithOwnAllowance() Option { return Option{own: true} }

type config struct {
	policy Policy
	notify func(Notice)
	clock  Clock
	budget *Budget
	own    bool
	allow  *Allowance
}

func newConfig(opts []Option) config {
	c := config{policy: CommonFourTimes, clock: RealClock}
	for i := range opts {
		o := &opts[i]
		if o.hasPolicy {
			c.policy = o.policy
		}
		if o.notify != nil {
			c.notify = o.notify
		}
		if o.clock != nil {
			c.clock = o.clock
		}
		if o.budget != nil {
			c.budget = o.budget
		}
		c.own = c.own || o.own
	}
	return c
}

// Error is what Do returns when it gives up for another reason than the
// context: the last attempt's error, with why and after how many attempts.
// It unwraps to that error, so errors.Is and errors.As see through it.
type Error struct {
	Reason   Reason
	Attempts int
	Err      error
}

func (e *Error) Error() string {
	s := "s"
	if e.Attempts == 1 {
		s = ""
	}
	return fmt.Sprintf("retry: gave up after %d attempt%s (%s): %v", e.Attempts, s, e.Reason, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Do calls op until it succeeds or the policy stops it, sleeping between
// attempts. It returns op's result, or an *Error holding the last error. When
// ctx ends it returns context.Cause(ctx) at once, and it never starts a sleep
// that would end past ctx's deadline.
//
// Nested calls share one allowance of retries, so that layers never
// multiply: the outermost Do puts an Allowance of its policy's retries
// (MaxAttempts - 1; no limit when MaxAttempts is 0) in the context it gives
// op, and every Do under it, and every retry layer that reads
// AllowanceFrom, draws its retries from that one allowance. Three nested
// layers of four attempts around an op that always fails make four calls,
// not 64. An allowance set by WithAllowance is drawn from in the same way;
// WithOwnAllowance opts a call out. On success a nested Do allocates
// nothing; the outermost allocates its allowance.
//
// A resource failure (ClassResource) is a deferral, as for a task: it uses
// no attempt and no retry of the allowance, and is counted with the
// allowance's other deferrals against the policy's ceiling
// (DefaultMaxDeferrals unless the policy gives resource failures a
// schedule), so nested layers share that ceiling too.
func Do[T any](ctx context.Context, op func(context.Context) (T, error), opts ...Option) (T, error) {
	var zero T
	if ctx.Err() != nil {
		return zero, context.Cause(ctx)
	}
	c := newConfig(opts)
	if c.allow = AllowanceFrom(ctx); c.allow == nil || c.own {
		ctx, c.allow = newAllowance(ctx, retriesOf(c.policy))
	}
	if c.budget != nil {
		c.budget.Deposit()
	}
	var start time.Time
	if c.policy.MaxElapsed > 0 {
		start = c.clock.Now()
	}
	var prev time.Duration
	for n, calls := 1, 1; ; calls++ {
		v, err := op(ctx)
		if err == nil {
			return v, nil
		}
		d, stop := c.decide(ctx, n, calls, err, start, prev)
		if stop != nil {
			return zero, stop
		}
		if err := c.clock.Sleep(ctx, d.Delay); err != nil {
			return zero, err
		}
		prev = d.Delay
		if !d.Deferred {
			n++
		}
	}
}

// retriesOf is the allowance an outermost Do with policy p sets: p's
// retries, or no limit.
func retriesOf(p Policy) int64 {
	if p.MaxAttempts <= 0 {
		return math.MaxInt64
	}
	return int64(p.MaxAttempts - 1)
}

// decide takes the decision after attempt n (the calls-th call of op)
// failed with err, notifies, and returns the error to stop with, if any.
func (c *config) decide(ctx context.Context, n, calls int, err error, start time.Time, prev time.Duration) (Decision, error) {
	if ctx.Err() != nil {
		return Decision{}, context.Cause(ctx)
	}
	a := Attempt{Number: n, Err: err, PrevDelay: prev, Deferrals: int(c.allow.deferred.Load())}
	var now time.Time
	if c.needsNow(ctx, start) {
		now = c.clock.Now()
		if !start.IsZero() {
			a.Elapsed = now.Sub(start)
		}
	}
	d := c.policy.Decide(a, now)
	if d.Retry && !c.allowed(ctx, now, d) {
		d = d.Stop(ReasonBudget)
	}
	if c.notify != nil {
		c.notify(Notice{Attempt: calls, Err: err, Decision: d})
	}
	if d.Reason == ReasonCanceled {
		return d, err
	}
	if !d.Retry {
		return d, &Error{Reason: d.Reason, Attempts: calls, Err: err}
	}
	return d, nil
}

// needsNow reports whether the decision needs the time: for the elapsed
// budget, the deadline, or the notify hook's Decision.At. Reading the clock
// costs more than the rest of a decision on some machines.
func (c *config) needsNow(ctx context.Context, start time.Time) bool {
	if !start.IsZero() || c.notify != nil {
		return true
	}
	_, ok := ctx.Deadline()
	return ok
}

// allowed checks the retry against the context's deadline and the budgets.
func (c *config) allowed(ctx context.Context, now time.Time, d Decision) bool {
	if dl, ok := ctx.Deadline(); ok && !now.IsZero() && now.Add(d.Delay).After(dl) {
		return false
	}
	if d.Deferred {
		c.allow.deferred.Add(1)
	} else if !c.allow.Take() {
		return false
	}
	return c.budget == nil || c.budget.Withdraw()
}
