package store

import (
	"testing"
	"time"
)

func TestPressureDoublesAndEases(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	var p Pressure
	at := now
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute} {
		p.Raise(at, time.Second, time.Minute)
		if p.Level != i+1 || !p.Until.Equal(at.Add(want)) {
			t.Fatalf("raise %d: %+v, want level %d until +%v", i+1, p, i+1, want)
		}
		p.Raise(at.Add(want/2), time.Second, time.Minute) // during the hold: the same congestion
		if p.Level != i+1 {
			t.Fatalf("a failure during the hold raised the level to %d", p.Level)
		}
		at = p.Until
	}
	for range 20 {
		p.Ease()
	}
	if p.Level != 0 {
		t.Errorf("level %d after easing more than raising", p.Level)
	}
}

func TestBudgetAllowsAShareOfFirstAttempts(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	r := BudgetRates{Ratio: 0.2, Floor: 1, Burst: 10}
	var b Budget
	if got := b.Withdraw(now, 15, r); got != 10 {
		t.Fatalf("a new budget gave %d retries, want its burst 10", got)
	}
	if got := b.Withdraw(now, 1, r); got != 0 {
		t.Fatalf("an empty budget gave %d", got)
	}
	b.Deposit(now, 20, r) // 20 first attempts: 4 retries
	if got := b.Withdraw(now, 10, r); got != 4 {
		t.Errorf("after 20 first attempts: %d retries, want 4", got)
	}
	if got := b.Withdraw(now.Add(3*time.Second), 10, r); got != 3 {
		t.Errorf("3s later: %d retries, want the floor's 3", got)
	}
	b.Deposit(now.Add(time.Hour), 1000, r)
	if b.Tokens != 10 {
		t.Errorf("tokens %v, want capped at the burst 10", b.Tokens)
	}
}
