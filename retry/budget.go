package retry

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Budget is a token-bucket retry budget shared by many callers, in the
// manner of gRPC's retry throttling and Finagle's retry budget: every first
// attempt deposits Ratio tokens, every retry withdraws one, and a floor of
// Floor tokens per second keeps a trickle of retries possible when traffic
// is low. When the bucket is empty, retries are refused: a downstream that
// fails everything sees at most Ratio × its normal load in retries, instead
// of attempts × its load.
//
// The zero Budget is ready to use with the defaults. It is safe for
// concurrent use.
type Budget struct {
	// Ratio is the retries allowed per first attempt; 0 means 0.2.
	Ratio float64
	// Floor is the retries per second allowed whatever the traffic; 0 means
	// 1, negative means none.
	Floor float64
	// Burst is the most tokens the bucket holds; 0 means 10. The bucket
	// starts full.
	Burst float64
	// Now is the clock; nil is time.Now.
	Now func() time.Time

	mu     sync.Mutex
	init   bool
	tokens float64
	last   time.Time
}

// Deposit records a first attempt.
func (b *Budget) Deposit() {
	b.mu.Lock()
	b.refill()
	b.tokens = min(b.tokens+b.ratio(), b.burst())
	b.mu.Unlock()
}

// Withdraw takes one retry from the budget, and reports whether it was
// there to take.
func (b *Budget) Withdraw() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// Tokens returns the retries the budget allows now.
func (b *Budget) Tokens() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	return b.tokens
}

// refill adds the floor's tokens for the time since the last call. The
// caller holds b.mu.
func (b *Budget) refill() {
	now := b.now()
	if !b.init {
		b.init, b.tokens, b.last = true, b.burst(), now
		return
	}
	if dt := now.Sub(b.last); dt > 0 {
		b.tokens = min(b.tokens+b.floor()*dt.Seconds(), b.burst())
		b.last = now
	}
}

func (b *Budget) ratio() float64 { return orFloat(b.Ratio, 0.2) }
func (b *Budget) burst() float64 { return orFloat(b.Burst, 10) }

func (b *Budget) floor() float64 {
	if b.Floor < 0 {
		return 0
	}
	return orFloat(b.Floor, 1)
}

func (b *Budget) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

func orFloat(v, def float64) float64 {
	if v > 0 {
		return v
	}
	return def
}

// Allowance is the retries left to one logical call, shared by every retry
// layer that serves it: the outermost Do puts one in the context it gives
// its op (or an outer layer does, with WithAllowance), and every Do under
// it draws its retries from it, so nested layers of four attempts each
// make at most four calls in all, not 4 × 4 × 4.
type Allowance struct {
	left     atomic.Int64
	deferred atomic.Int64 // the resource deferrals taken, which use no retry
}

// Take uses one retry, and reports whether one was left.
func (a *Allowance) Take() bool {
	for {
		n := a.left.Load()
		if n <= 0 {
			return false
		}
		if a.left.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// Left returns the retries left; an allowance without limit (set by a Do
// whose policy has none) has math.MaxInt64 of them, less those taken.
func (a *Allowance) Left() int { return int(min(a.left.Load(), math.MaxInt)) }

type allowanceKey struct{}

// allowanceCtx carries an Allowance in one allocation, where
// context.WithValue and a separate Allowance would take two.
type allowanceCtx struct {
	context.Context
	a Allowance
}

func (c *allowanceCtx) Value(key any) any {
	if key == (allowanceKey{}) {
		return &c.a
	}
	return c.Context.Value(key)
}

func newAllowance(ctx context.Context, retries int64) (context.Context, *Allowance) {
	c := &allowanceCtx{Context: ctx}
	c.a.left.Store(max(retries, 0))
	return c, &c.a
}

// WithAllowance returns a context that carries a fresh allowance of retries
// for one logical call. If ctx already carries one, ctx is returned as it is:
// the outermost layer sets the budget. Do sets one by itself when ctx has
// none; WithAllowance is for a layer that is not a Do (a batcher, a gRPC
// interceptor) or that wants a budget other than its policy's retries.
func WithAllowance(ctx context.Context, retries int) context.Context {
	if AllowanceFrom(ctx) != nil {
		return ctx
	}
	ctx, _ = newAllowance(ctx, int64(retries))
	return ctx
}

// AllowanceFrom returns the allowance ctx carries, or nil.
func AllowanceFrom(ctx context.Context) *Allowance {
	a, _ := ctx.Value(allowanceKey{}).(*Allowance)
	return a
}
