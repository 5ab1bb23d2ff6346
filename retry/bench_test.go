package retry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/grit-run/grit/retry"
)

var sinkDecision retry.Decision

func BenchmarkDecide(b *testing.B) {
	p := retry.CommonFourTimes
	err := errors.New("boom")
	now := time.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		sinkDecision = p.Decide(retry.Attempt{Number: i%4 + 1, Err: err}, now)
	}
}

func BenchmarkDoSuccess(b *testing.B) {
	ctx := context.Background()
	op := func(context.Context) (int, error) { return 1, nil }
	opt := retry.WithPolicy(retry.CommonFourTimes)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := retry.Do(ctx, op, opt); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDoThreeFailures fails three times and then succeeds, with zero
// delays, so it measures the retry machinery rather than the sleeping.
func BenchmarkDoThreeFailures(b *testing.B) {
	ctx := context.Background()
	errTemp := errors.New("temporary")
	opt := retry.WithPolicy(retry.Policy{MaxAttempts: 5, Backoff: retry.Constant{}})
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		_, err := retry.Do(ctx, func(context.Context) (int, error) {
			n++
			if n <= 3 {
				return 0, errTemp
			}
			return n, nil
		}, opt)
		if err != nil {
			b.Fatal(err)
		}
	}
}

func TestDoSuccessAllocatesNothing(t *testing.T) {
	ctx := retry.WithAllowance(context.Background(), 3)
	op := func(context.Context) (int, error) { return 1, nil }
	budget := &retry.Budget{}
	opts := []retry.Option{retry.WithPolicy(retry.CommonFourTimes), retry.WithBudget(budget)}
	if n := testing.AllocsPerRun(1000, func() { _, _ = retry.Do(ctx, op, opts...) }); n != 0 {
		t.Errorf("Do's success path allocates %v times per call, want 0", n)
	}
	// Options built at the call site must not escape either.
	if n := testing.AllocsPerRun(1000, func() {
		_, _ = retry.Do(ctx, op, retry.WithPolicy(retry.CommonFourTimes), retry.WithBudget(budget))
	}); n != 0 {
		t.Errorf("Do with call-site options allocates %v times per call, want 0", n)
	}
}

// TestOutermostDoAllocatesItsAllowance: a Do with no allowance in its
// context sets one for the layers under it, in one allocation.
func TestOutermostDoAllocatesItsAllowance(t *testing.T) {
	op := func(context.Context) (int, error) { return 1, nil }
	opt := retry.WithPolicy(retry.CommonFourTimes)
	if n := testing.AllocsPerRun(1000, func() { _, _ = retry.Do(context.Background(), op, opt) }); n != 1 {
		t.Errorf("the outermost Do allocates %v times per call, want 1 (its allowance)", n)
	}
}
