package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// peaks tracks, per label, how many handlers run at once and the most
// that ever did.
type peaks struct {
	mu            sync.Mutex
	running, peak map[string]int
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
	p := &peaks{running: map[string]int{}, peak: map[string]int{}}
	h := Handler{Kind: "work", Fn: func(_ context.Context, tk *task.Task) error {
		label := tk.Queue + "/" + tk.Tenant
		p.enter(label)
		defer p.leave(label)
		time.Sleep(20 * time.Millisecond) // the work, holding its slot
		if tk.Tenant == "globex" {
			// Hold the slot until three of the unlimited tenant run at once
			// (the limits leave it at least 3 of the 8 slots), or give up
			// after a while: on a busy machine 20ms of work may end before
			// the next claim, which would say nothing of the limits.
			deadline := time.Now().Add(5 * time.Second)
			for p.max(label) < 3 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
		}
		return nil
	}}
	var ids []int64
	for range 12 {
		ids = append(ids, enqueue(t, st, task.NewTask{Kind: "work", Queue: "mail"}).ID,
			enqueue(t, st, task.NewTask{Kind: "work", Tenant: "acme"}).ID,
			enqueue(t, st, task.NewTask{Kind: "work", Tenant: "globex"}).ID)
	}
	for range 2 {
		cfg := testConfig(st)
		cfg.Concurrency, cfg.Queues = 4, []string{"default", "mail"}
		start(t, cfg, h)
	}
	for _, id := range ids {
		if got := waitState(t, st, id, task.Success); got.Attempt != 1 {
			t.Errorf("task %d succeeded on attempt %d: waiting at a limit must use no attempt", id, got.Attempt)
		}
	}
	if m := p.max("mail/"); m > 3 || m < 2 {
		t.Errorf("at most %d attempts of queue mail ran at once, want 3 (its limit)", m)
	}
	if m := p.max("default/acme"); m > 2 || m < 1 {
		t.Errorf("at most %d attempts of tenant acme ran at once, want 2 (its limit)", m)
	}
	if m := p.max("default/globex"); m < 3 {
		t.Errorf("at most %d attempts of the unlimited tenant globex ran at once, want at least 3 of the 8 slots", m)
	}
}

// TestATenantAtItsLimitDoesNotStarveOthers: a tenant with a long backlog
// enqueued first, limited to one attempt at a time, does not hold back
// another tenant's tasks enqueued after it, and is not claimed and given
// back again and again: the claim leaves the full tenant out.
func TestATenantAtItsLimitDoesNotStarveOthers(t *testing.T) {
	t.Parallel()
	st := newStore(t)
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
	start(t, cfg, Handler{Kind: "work", Fn: func(context.Context, *task.Task) error {
		time.Sleep(20 * time.Millisecond)
		return nil
	}})
	for _, id := range small {
		waitState(t, st, id, task.Success)
	}
	ended := 0
	for _, id := range big {
		if got, err := st.GetTask(context.Background(), id); err == nil && got.State == task.Success {
			ended++
		}
	}
	if ended > 20 {
		t.Errorf("%d of the 40 tasks of the limited tenant ended before the other tenant's 6: it held them back", ended)
	}
	released := 0
	for _, id := range big {
		if got := waitState(t, st, id, task.Success); got.Attempt != 1 {
			t.Errorf("task %d of the limited tenant succeeded on attempt %d, want 1", id, got.Attempt)
		}
		for _, a := range attempts(t, st, id) {
			if a.Outcome == task.OutcomeReleased {
				released++
			}
		}
	}
	// The first claim takes 4 of its tasks and gives 3 back; after that the
	// tenant is left out of claims while full, and refilled one for one. A
	// busy machine adds a few (a claim that starts as a result is being
	// recorded sees a place that is not free yet); a tenant not left out
	// is claimed and given back three at a time, every claim: well over
	// the 40 tasks.
	if released > 20 {
		t.Errorf("%d of the limited tenant's tasks were claimed and given back: a full tenant must be left out of claims", released)
	}
}
