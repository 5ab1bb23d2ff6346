package engine

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/clock"
	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/store/sqlite/sqlitetest"
	"github.com/grit-run/grit/task"
)

// peaks tracks, per label, how many handlers run at once and the most
// that ever did; hold keeps handlers in their slots while a label fills.
type peaks struct {
	mu            sync.Mutex
	running, peak map[string]int
	engines       []*Engine
	full          map[string]chan struct{} // closed when the label first reaches its limit
	claimsAt      map[string][]int64       // each engine's claims then
}

func newPeaks() *peaks {
	return &peaks{running: map[string]int{}, peak: map[string]int{}, full: map[string]chan struct{}{}, claimsAt: map[string][]int64{}}
}

// watch gives p the engines whose claim loops hold waits on; call it
// before any task is due.
func (p *peaks) watch(es ...*Engine) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.engines = es
}

func (p *peaks) enter(label string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running[label]++
	p.peak[label] = max(p.peak[label], p.running[label])
}

func (p *peaks) leave(label string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running[label]--
}

func (p *peaks) max(label string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak[label]
}

// hold keeps a handler of label (entered) in its slot until limit of the
// label run at once, then until every engine with a free slot has gone
// round its claim loop twice since, trying for more: an attempt past the
// limit would have started by then. It fails if that does not come within
// a while.
func (p *peaks) hold(ctx context.Context, label string, limit int) error {
	full := p.filled(label, limit)
	select {
	case <-full:
	case <-ctx.Done():
		return ctx.Err()
	}
	if !poll.Wait(20*time.Second, func() bool { return p.wentRound(label) }) {
		return fmt.Errorf("the claim loops did not go round while %s was at its limit", label)
	}
	return nil
}

// filled returns the channel closed when label first has limit running,
// closing it (and noting the engines' claims) if it has them now.
func (p *peaks) filled(label string, limit int) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	full, ok := p.full[label]
	if !ok {
		full = make(chan struct{})
		p.full[label] = full
	}
	if _, done := p.claimsAt[label]; !done && p.running[label] >= limit {
		for _, e := range p.engines {
			p.claimsAt[label] = append(p.claimsAt[label], e.Stats().Claims.Load())
		}
		close(full)
	}
	return full
}

func (p *peaks) wentRound(label string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, e := range p.engines {
		busy := len(e.slots) == cap(e.slots) // it claims nothing more, beyond a limit or not
		if !busy && e.Stats().Claims.Load() < p.claimsAt[label][i]+2 {
			return false
		}
	}
	return true
}

func setLimits(t *testing.T, st store.Store, ls ...store.Limit) {
	t.Helper()
	for _, l := range ls {
		if err := st.(store.Limiter).SetLimit(context.Background(), l); err != nil {
			t.Fatal(err)
		}
	}
}

// TestQueueAndTenantLimitsHoldAcrossWorkers: two workers of 4 slots each
// share a store; a queue's limit of 3 and a tenant's limit of 2 hold
// across both, no task uses an attempt waiting, and an unlimited tenant's
// tasks run beside them.
func TestQueueAndTenantLimitsHoldAcrossWorkers(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	setLimits(t, st, store.Limit{Scope: store.ScopeQueue, Name: "mail", Max: 3}, store.Limit{Scope: store.ScopeTenant, Name: "acme", Max: 2})
	p := newPeaks()
	// Each attempt holds its slot until its queue or tenant is at its
	// limit, the unlimited tenant at 3 (the limits leave it at least 3 of
	// the 8 slots), and both workers have tried to claim more since.
	limits := map[string]int{"mail/": 3, "default/acme": 2, "default/globex": 3}
	h := Handler{Kind: "work", Fn: func(ctx context.Context, tk *task.Task) error {
		label := tk.Queue + "/" + tk.Tenant
		p.enter(label)
		defer p.leave(label)
		return p.hold(ctx, label, limits[label])
	}}
	var es []*Engine
	for range 2 {
		cfg := testConfig(st)
		cfg.Concurrency, cfg.Queues = 4, []string{"default", "mail"}
		// A lease no stall of a busy machine's disk outlasts: a lease lost
		// would be an attempt used, which the test counts against the limits.
		cfg.Lease = time.Minute
		es = append(es, start(t, cfg, h))
	}
	p.watch(es...)
	var ids []int64
	for range 12 {
		ids = append(ids, enqueue(t, st, task.NewTask{Kind: "work", Queue: "mail"}).ID,
			enqueue(t, st, task.NewTask{Kind: "work", Tenant: "acme"}).ID,
			enqueue(t, st, task.NewTask{Kind: "work", Tenant: "globex"}).ID)
	}
	for _, id := range ids {
		if got := waitState(t, st, id, task.Success); got.Attempt != 1 {
			t.Errorf("task %d succeeded on attempt %d: waiting at a limit must use no attempt", id, got.Attempt)
		}
	}
	if m := p.max("mail/"); m != 3 {
		t.Errorf("at most %d attempts of queue mail ran at once, want 3 (its limit)", m)
	}
	if m := p.max("default/acme"); m != 2 {
		t.Errorf("at most %d attempts of tenant acme ran at once, want 2 (its limit)", m)
	}
	if m := p.max("default/globex"); m < 3 {
		t.Errorf("at most %d attempts of the unlimited tenant globex ran at once, want at least 3 of the 8 slots", m)
	}
}

// TestATenantAtItsLimitDoesNotStarveOthers: a tenant with a long backlog
// enqueued first, limited to one attempt at a time, does not hold back
// another tenant's tasks enqueued after it: they are all done while its
// one attempt holds its slot. Nor is it claimed and given back again and
// again: the claim leaves the full tenant out.
func TestATenantAtItsLimitDoesNotStarveOthers(t *testing.T) {
	t.Parallel()
	st, tick := idleClockStore(t)
	setLimits(t, st, store.Limit{Scope: store.ScopeTenant, Name: "big", Max: 1})
	var big []int64
	for range 40 {
		big = append(big, enqueue(t, st, task.NewTask{Kind: "work", Tenant: "big"}).ID)
	}
	var small []int64
	for range 6 {
		small = append(small, enqueue(t, st, task.NewTask{Kind: "work", Tenant: "small"}).ID)
	}
	cfg := testConfig(st)
	cfg.Concurrency = 4
	cfg.Clock = tick.clock
	smallDone := make(chan struct{})
	start(t, cfg, Handler{Kind: "work", Fn: func(ctx context.Context, tk *task.Task) error {
		if tk.Tenant != "big" {
			return nil
		}
		select { // the limited tenant's attempt holds its slot
		case <-smallDone:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}})
	for _, id := range small {
		tick.wait(id)
	}
	close(smallDone)
	released := 0
	for _, id := range big {
		got := tick.wait(id)
		if got.Attempt != 1 {
			t.Errorf("task %d of the limited tenant succeeded on attempt %d, want 1", id, got.Attempt)
		}
		released += got.Waits
		if as := attempts(t, st, id); len(as) != 1 {
			t.Errorf("task %d has %d attempts in its history, want 1: a give-back at a limit is counted on the task, not written as an attempt", id, len(as))
		}
	}
	// The first claim takes 4 of its tasks and gives 3 back; after that the
	// tenant is left out of claims while full, and refilled one for one,
	// and the last few given back are claimed and given back again as
	// they come due (3, then 2, then 1, or so); a tenant not left out is
	// claimed and given back three at a time, every claim: well over the
	// 40 tasks.
	if released > 20 {
		t.Errorf("%d of the limited tenant's tasks were claimed and given back: a full tenant must be left out of claims", released)
	}
}

// idleClock is a store's and its engine's clock that moves only when the
// engine has nothing left to do but wait: no task is running and every
// task left waits past the clock's start (given back at a limit). Until
// then, a queue or tenant that a claim found full stays left out of the
// claims for as long as its running attempt lasts, however busy the
// machine, as it does on an idle one when the attempt is shorter than
// gate.LimitWait: the give-backs counted are the gate's doing, not the
// machine's speed.
type idleClock struct {
	t     *testing.T
	st    store.Store
	clock *clock.Fake
	start time.Time
}

func idleClockStore(t *testing.T) (store.Store, *idleClock) {
	t.Helper()
	start := time.Now()
	fc := clock.NewFake(start)
	st, err := sqlite.OpenConfig(context.Background(), sqlite.Config{Path: sqlitetest.Path(t), Now: fc.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, &idleClock{t: t, st: st, clock: fc, start: start}
}

// wait waits, bounded, for the task to succeed, moving the clock on by
// gate.LimitWait whenever the engine has nothing to do but wait, and
// returns the task.
func (c *idleClock) wait(id int64) task.Task {
	c.t.Helper()
	var last task.Task
	waitFor(c.t, 20*time.Second, func() bool {
		var err error
		if last, err = c.st.GetTask(context.Background(), id); err != nil {
			c.t.Fatal(err)
		}
		if last.State == task.Success {
			return true
		}
		c.advanceIfIdle()
		return false
	}, func() string { return "task in state " + string(last.State) + ", error " + last.LastError })
	return last
}

func (c *idleClock) advanceIfIdle() {
	ctx := context.Background()
	running, err := c.st.ListTasks(ctx, task.Filter{States: []task.State{task.Running}})
	if err != nil {
		c.t.Fatal(err)
	}
	next, ok, err := c.st.NextDue(ctx, store.ClaimRequest{})
	if err != nil {
		c.t.Fatal(err)
	}
	if len(running) == 0 && ok && next.After(c.start) {
		c.clock.Advance(gate.LimitWait)
	}
}
