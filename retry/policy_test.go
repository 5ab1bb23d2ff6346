package retry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/grit-run/grit/retry"
)

var errBoom = errors.New("boom")

func TestDecide(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fixed := retry.Policy{MaxAttempts: 5, Backoff: retry.Constant{Interval: time.Second}}
	tests := []struct {
		name   string
		policy retry.Policy
		a      retry.Attempt
		retry  bool
		reason retry.Reason
		delay  time.Duration
	}{
		{"retry", fixed, retry.Attempt{Number: 1, Err: errBoom}, true, retry.ReasonRetry, time.Second},
		{"last attempt", fixed, retry.Attempt{Number: 5, Err: errBoom}, false, retry.ReasonExhausted, 0},
		{"unlimited", retry.Policy{Backoff: retry.Constant{Interval: time.Second}}, retry.Attempt{Number: 1000, Err: errBoom}, true, retry.ReasonRetry, time.Second},
		{"never", retry.Never, retry.Attempt{Number: 1, Err: errBoom}, false, retry.ReasonExhausted, 0},
		{"permanent", fixed, retry.Attempt{Number: 1, Err: retry.Permanent(errBoom)}, false, retry.ReasonPermanent, 0},
		{"canceled", fixed, retry.Attempt{Number: 1, Err: context.Canceled}, false, retry.ReasonCanceled, 0},
		{"after raises the delay", fixed, retry.Attempt{Number: 1, Err: retry.After(errBoom, 7*time.Second)}, true, retry.ReasonRetry, 7 * time.Second},
		{"after below the backoff", fixed, retry.Attempt{Number: 1, Err: retry.After(errBoom, time.Millisecond)}, true, retry.ReasonRetry, time.Second},
		{"resource backoff 1", fixed, retry.Attempt{Number: 1, Err: retry.Resource(errBoom)}, true, retry.ReasonRetry, time.Minute},
		{"resource backoff by deferral", fixed, retry.Attempt{Number: 1, Deferrals: 2, Err: retry.Resource(errBoom)}, true, retry.ReasonRetry, 4 * time.Minute},
		{"resource backoff capped", fixed, retry.Attempt{Number: 1, Deferrals: 3, Err: retry.Resource(errBoom)}, true, retry.ReasonRetry, 5 * time.Minute},
		{"resource past the attempts", fixed, retry.Attempt{Number: 5, Err: retry.Resource(errBoom)}, true, retry.ReasonRetry, time.Minute},
		{"resource under never", retry.Never, retry.Attempt{Number: 1, Err: retry.Resource(errBoom)}, true, retry.ReasonRetry, time.Minute},
		{"last deferral", retry.Never, retry.Attempt{Number: 1, Deferrals: retry.DefaultMaxDeferrals - 1, Err: retry.Resource(errBoom)}, true, retry.ReasonRetry, 5 * time.Minute},
		{"deferrals used up", retry.Never, retry.Attempt{Number: 1, Deferrals: retry.DefaultMaxDeferrals, Err: retry.Resource(errBoom)}, false, retry.ReasonExhausted, 0},
		{"deferrals do not lift the attempts", fixed, retry.Attempt{Number: 5, Deferrals: 7, Err: errBoom}, false, retry.ReasonExhausted, 0},
		{"poison", fixed, retry.Attempt{Number: 2, Err: errBoom, Streak: 2}, false, retry.ReasonPoison, 0},
		{"poison beats exhausted", fixed, retry.Attempt{Number: 5, Err: errBoom, Streak: 2}, false, retry.ReasonPoison, 0},
		{"one failure is not poison", fixed, retry.Attempt{Number: 2, Err: errBoom, Streak: 1}, true, retry.ReasonRetry, time.Second},
		{"transient is never poison", fixed, retry.Attempt{Number: 3, Err: retry.Transient(errBoom), Streak: 3}, true, retry.ReasonRetry, time.Second},
		{"interrupted is never poison", fixed, retry.Attempt{Number: 3, Kind: retry.Interrupted, Streak: 3}, true, retry.ReasonRetry, time.Second},
		{"poison after 3", withPoison(fixed, 3), retry.Attempt{Number: 2, Err: errBoom, Streak: 2}, true, retry.ReasonRetry, time.Second},
		{"poison after 3 reached", withPoison(fixed, 3), retry.Attempt{Number: 3, Err: errBoom, Streak: 3}, false, retry.ReasonPoison, 0},
		{"poison off", withPoison(fixed, -1), retry.Attempt{Number: 3, Err: errBoom, Streak: 3}, true, retry.ReasonRetry, time.Second},
		{"explicit-only unmarked", explicit(fixed), retry.Attempt{Number: 1, Err: errBoom}, false, retry.ReasonPermanent, 0},
		{"explicit-only transient", explicit(fixed), retry.Attempt{Number: 1, Err: retry.Transient(errBoom)}, true, retry.ReasonRetry, time.Second},
		{"explicit-only interrupted", explicit(fixed), retry.Attempt{Number: 1, Kind: retry.Interrupted}, true, retry.ReasonRetry, time.Second},
		{"within elapsed budget", elapsed(fixed, time.Minute), retry.Attempt{Number: 1, Err: errBoom, Elapsed: 59 * time.Second}, true, retry.ReasonRetry, time.Second},
		{"past elapsed budget", elapsed(fixed, time.Minute), retry.Attempt{Number: 1, Err: errBoom, Elapsed: 59*time.Second + 1}, false, retry.ReasonBudget, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := tt.policy.Decide(tt.a, now)
			if d.Retry != tt.retry || d.Reason != tt.reason || d.Delay != tt.delay {
				t.Fatalf("Decide = retry %v %v delay %v; want retry %v %v delay %v", d.Retry, d.Reason, d.Delay, tt.retry, tt.reason, tt.delay)
			}
			if d.Retry && !d.At.Equal(now.Add(tt.delay)) {
				t.Errorf("At = %v, want now + %v", d.At, tt.delay)
			}
			if !d.Retry && !d.At.IsZero() {
				t.Errorf("a stop decision has At = %v", d.At)
			}
			if want := d.Retry && errors.Is(tt.a.Err, retry.ErrResource); d.Deferred != want {
				t.Errorf("Deferred = %v, want %v", d.Deferred, want)
			}
		})
	}
}

func TestDecideDefaultBackoffIsJittered(t *testing.T) {
	t.Parallel()
	p := retry.Policy{Rand: fixedRand(0.5)}
	d := p.Decide(retry.Attempt{Number: 3, Err: errBoom}, time.Time{})
	if d.Delay != 2*time.Second { // full jitter at 0.5 of 1s × 2²
		t.Errorf("default backoff gave %v, want 2s", d.Delay)
	}
}

func TestDecideDecorrelatedUsesPrevDelay(t *testing.T) {
	t.Parallel()
	p := retry.Policy{Backoff: retry.Decorrelated{Min: time.Second, Max: time.Hour}, Rand: fixedRand(0.999999)}
	d := p.Decide(retry.Attempt{Number: 2, Err: errBoom, PrevDelay: 10 * time.Second}, time.Time{})
	if d.Delay < 29*time.Second || d.Delay > 30*time.Second {
		t.Errorf("decorrelated delay %v, want near 3 × the previous 10s", d.Delay)
	}
}

func TestHooks(t *testing.T) {
	t.Parallel()
	var seen []retry.Kind
	record := func(a retry.Attempt, d retry.Decision) retry.Decision {
		seen = append(seen, a.Kind)
		return d
	}
	p := retry.Policy{
		MaxAttempts: 3,
		Backoff:     retry.Constant{Interval: time.Second},
		// Interrupted attempts are retried at once: the work never ran to the end.
		OnInterrupted: func(a retry.Attempt, d retry.Decision) retry.Decision {
			seen = append(seen, a.Kind)
			if d.Retry {
				d.At, d.Delay = d.At.Add(-d.Delay), 0
			}
			return d
		},
		// Task errors are not retried.
		OnTaskError: func(a retry.Attempt, d retry.Decision) retry.Decision {
			seen = append(seen, a.Kind)
			return d.Stop(retry.ReasonPermanent)
		},
		OnCommitError: record,
	}
	now := time.Unix(1000, 0)
	if d := p.Decide(retry.Attempt{Number: 1, Kind: retry.Interrupted}, now); !d.Retry || d.Delay != 0 || !d.At.Equal(now) {
		t.Errorf("interrupted: %+v, want an immediate retry", d)
	}
	if d := p.Decide(retry.Attempt{Number: 1, Err: errBoom}, now); d.Retry || d.Reason != retry.ReasonPermanent {
		t.Errorf("task error: %+v, want a permanent stop", d)
	}
	if d := p.Decide(retry.Attempt{Number: 1, Kind: retry.CommitError, Err: errBoom}, now); !d.Retry || d.Delay != time.Second {
		t.Errorf("commit error: %+v, want the policy's retry", d)
	}
	if d := p.Decide(retry.Attempt{Number: 3, Kind: retry.CommitError, Err: errBoom}, now); d.Retry || d.Reason != retry.ReasonExhausted {
		t.Errorf("commit error at the cap: %+v, want exhausted", d)
	}
	want := []retry.Kind{retry.Interrupted, retry.TaskError, retry.CommitError, retry.CommitError}
	if len(seen) != len(want) {
		t.Fatalf("hooks saw %v, want %v", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("hooks saw %v, want %v", seen, want)
		}
	}
}

func TestPresets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		p        retry.Policy
		attempts int // 0: unlimited
	}{
		{"CommonFourTimes", retry.CommonFourTimes, 5},
		{"CommonForever", retry.CommonForever, 0},
		{"Never", retry.Never, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			last := 0
			for n := 1; n <= 50; n++ {
				d := tt.p.Decide(retry.Attempt{Number: n, Err: errBoom}, time.Time{})
				if !d.Retry {
					if d.Reason != retry.ReasonExhausted {
						t.Fatalf("attempt %d stopped for %v", n, d.Reason)
					}
					last = n
					break
				}
			}
			if last != tt.attempts {
				t.Errorf("stopped after attempt %d, want %d (0 = never)", last, tt.attempts)
			}
		})
	}
}

func withPoison(p retry.Policy, n int) retry.Policy { p.PoisonAfter = n; return p }
func explicit(p retry.Policy) retry.Policy          { p.ExplicitOnly = true; return p }
func elapsed(p retry.Policy, d time.Duration) retry.Policy {
	p.MaxElapsed = d
	return p
}

func TestClassSchedules(t *testing.T) {
	t.Parallel()
	p := retry.MustParse("5 1s 1m jitter=none transient=20,2s resource=3,7s unclassified=never after=1s")
	now := time.Now()
	bug := errors.New("KeyError: 42")
	blip := retry.Transient(errors.New("payments-api: 503"))
	tests := []struct {
		name  string
		a     retry.Attempt
		retry bool
		delay time.Duration
	}{
		{"transient past the policy's attempts", retry.Attempt{Number: 9, Err: blip}, true, 2 * time.Second},
		{"transient at its own limit", retry.Attempt{Number: 21, Err: blip}, false, 0},
		{"unclassified never retried", retry.Attempt{Number: 1, Err: bug, Streak: 1}, false, 0},
		{"resource at its own limit", retry.Attempt{Number: 1, Deferrals: 3, Err: retry.Resource(bug)}, false, 0},
		{"resource with its own backoff", retry.Attempt{Number: 1, Deferrals: 2, Err: retry.Resource(bug)}, true, 7 * time.Second},
		{"resource past the policy's attempts", retry.Attempt{Number: 9, Err: retry.Resource(bug)}, true, 7 * time.Second},
		{"after: at least what it asks", retry.Attempt{Number: 9, Err: retry.After(bug, 30*time.Second)}, true, 30 * time.Second},
		{"after: the class's backoff as a floor", retry.Attempt{Number: 9, Err: retry.After(bug, 0)}, true, time.Second},
		{"an interrupted attempt keeps the policy's schedule", retry.Attempt{Number: 2, Kind: retry.Interrupted}, true, 2 * time.Second},
		{"interrupted past the policy's attempts", retry.Attempt{Number: 6, Kind: retry.Interrupted}, false, 0},
		{"permanent is never retried", retry.Attempt{Number: 1, Err: retry.Permanent(bug)}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := p.Decide(tt.a, now)
			if d.Retry != tt.retry || d.Delay != tt.delay {
				t.Errorf("Decide = retry %v after %v (%v), want retry %v after %v", d.Retry, d.Delay, d.Reason, tt.retry, tt.delay)
			}
		})
	}
}

func TestClassPolicyNilBackoffKeepsThePolicys(t *testing.T) {
	t.Parallel()
	p := retry.Policy{
		MaxAttempts: 2,
		Backoff:     retry.Constant{Interval: 3 * time.Second},
		Resource:    retry.Constant{Interval: time.Minute},
		Classes: map[retry.Class]retry.ClassPolicy{
			retry.ClassTransient: {MaxAttempts: 0}, // unlimited, the policy's backoff
			retry.ClassResource:  {MaxAttempts: 10},
		},
	}
	now := time.Now()
	if d := p.Decide(retry.Attempt{Number: 100, Err: retry.Transient(errBoom)}, now); !d.Retry || d.Delay != 3*time.Second {
		t.Errorf("transient: %+v, want a retry after 3s", d)
	}
	if d := p.Decide(retry.Attempt{Number: 1, Deferrals: 5, Err: retry.Resource(errBoom)}, now); !d.Retry || d.Delay != time.Minute {
		t.Errorf("resource: %+v, want a retry after the policy's resource backoff, 1m", d)
	}
	if got := p.String(); got != "1 3s transient=3s resource=9,1m" {
		t.Errorf("String() = %q", got)
	}
}
