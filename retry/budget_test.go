package retry_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grit-run/grit/retry"
)

func TestBudgetRatio(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	b := &retry.Budget{Ratio: 0.2, Floor: -1, Burst: 10, Now: clock.Now}
	// The bucket starts full: a burst of 10 retries.
	for i := range 10 {
		if !b.Withdraw() {
			t.Fatalf("retry %d of the initial burst refused", i+1)
		}
	}
	if b.Withdraw() {
		t.Fatal("an empty budget allowed a retry")
	}
	// 100 first attempts earn 20 retries at 20%, but the bucket holds 10.
	for range 100 {
		b.Deposit()
	}
	allowed := 0
	for b.Withdraw() {
		allowed++
	}
	if allowed != 10 {
		t.Errorf("after 100 first attempts: %d retries allowed, want the burst of 10", allowed)
	}
	// 25 first attempts earn 5 retries.
	for range 25 {
		b.Deposit()
	}
	allowed = 0
	for b.Withdraw() {
		allowed++
	}
	if allowed != 5 {
		t.Errorf("after 25 first attempts: %d retries allowed, want 5", allowed)
	}
}

func TestBudgetFloor(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	b := &retry.Budget{Floor: 2, Burst: 4, Now: clock.Now}
	for b.Withdraw() {
	}
	clock.Advance(500 * time.Millisecond)
	if !b.Withdraw() {
		t.Fatal("the floor of 2/s gave nothing after 500ms")
	}
	if b.Withdraw() {
		t.Fatal("the floor of 2/s gave two retries in 500ms")
	}
	clock.Advance(time.Hour)
	if got := b.Tokens(); got != 4 {
		t.Errorf("after an hour the bucket holds %v, want its burst 4", got)
	}
}

func TestBudgetDefaults(t *testing.T) {
	t.Parallel()
	var b retry.Budget // the zero value is usable
	if got := b.Tokens(); got != 10 {
		t.Errorf("zero Budget starts with %v tokens, want 10", got)
	}
}

// TestBudgetConcurrent hammers one budget from many goroutines (run with
// -race): with no refill and no deposits, exactly the burst is granted.
func TestBudgetConcurrent(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	b := &retry.Budget{Floor: -1, Burst: 100, Now: clock.Now}
	var granted atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 1000 {
				if b.Withdraw() {
					granted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if granted.Load() != 100 {
		t.Errorf("granted %d retries, want exactly the burst of 100", granted.Load())
	}
	// Deposits and withdrawals together: 16 × 1000 deposits at 0.2 earn
	// 3,200 retries, all of which are taken as they come.
	granted.Store(0)
	b2 := &retry.Budget{Floor: -1, Burst: 4000, Now: clock.Now}
	for b2.Withdraw() {
	}
	for range 16 {
		wg.Go(func() {
			for range 1000 {
				b2.Deposit()
			}
		})
	}
	wg.Wait()
	for b2.Withdraw() {
		granted.Add(1)
	}
	if g := granted.Load(); g < 3199 || g > 3200 {
		t.Errorf("16,000 deposits at 0.2 granted %d retries, want 3,200", g)
	}
}

func TestAllowance(t *testing.T) {
	t.Parallel()
	ctx := retry.WithAllowance(context.Background(), 3)
	a := retry.AllowanceFrom(ctx)
	if a == nil || a.Left() != 3 {
		t.Fatalf("allowance = %v", a)
	}
	// An inner layer does not replace the outer layer's allowance.
	if inner := retry.WithAllowance(ctx, 100); retry.AllowanceFrom(inner) != a {
		t.Fatal("an inner WithAllowance replaced the outer allowance")
	}
	var wg sync.WaitGroup
	var taken atomic.Int64
	for range 8 {
		wg.Go(func() {
			for range 10 {
				if a.Take() {
					taken.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if taken.Load() != 3 || a.Left() != 0 {
		t.Errorf("taken %d, left %d; want 3 and 0", taken.Load(), a.Left())
	}
	if retry.AllowanceFrom(context.Background()) != nil {
		t.Error("a bare context has an allowance")
	}
}
