package retry_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/grit-run/grit/retry"
)

// failing returns an op that fails n times with err and then returns "ok",
// counting its calls.
func failing(n int, err error, calls *int) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		*calls++
		if *calls <= n {
			return "", err
		}
		return "ok", nil
	}
}

func TestDoSucceedsAfterFailures(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	calls := 0
	var notices []retry.Notice
	got, err := retry.Do(context.Background(), failing(3, errBoom, &calls),
		retry.WithPolicy(retry.MustParse("5 1s 1m jitter=none")),
		retry.WithClock(clock),
		retry.WithNotify(func(n retry.Notice) { notices = append(notices, n) }))
	if err != nil || got != "ok" {
		t.Fatalf("Do = %q, %v", got, err)
	}
	if calls != 4 {
		t.Errorf("%d calls, want 4", calls)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
	if s := clock.Slept(); fmt.Sprint(s) != fmt.Sprint(want) {
		t.Errorf("slept %v, want %v", s, want)
	}
	if len(notices) != 3 || notices[2].Attempt != 3 || !notices[2].Decision.Retry || notices[2].Err != errBoom {
		t.Errorf("notices %+v", notices)
	}
}

func TestDoStops(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		policy   retry.Policy
		err      error
		calls    int
		reason   retry.Reason
		canceled bool
	}{
		{"exhausted", retry.MustParse("2 1s"), errBoom, 3, retry.ReasonExhausted, false},
		{"permanent", retry.MustParse("10 1s"), retry.Permanent(errBoom), 1, retry.ReasonPermanent, false},
		{"explicit-only", retry.Policy{ExplicitOnly: true}, errBoom, 1, retry.ReasonPermanent, false},
		{"elapsed budget", retry.MustParse("1s max_elapsed=3500ms"), errBoom, 4, retry.ReasonBudget, false},
		{"canceled error", retry.MustParse("10 1s"), fmt.Errorf("op: %w", context.Canceled), 1, retry.ReasonCanceled, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			_, err := retry.Do(context.Background(), failing(100, tt.err, &calls),
				retry.WithPolicy(tt.policy), retry.WithClock(newFakeClock()))
			if calls != tt.calls {
				t.Errorf("%d calls, want %d", calls, tt.calls)
			}
			if tt.canceled {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("err = %v, want context.Canceled", err)
				}
				return
			}
			var re *retry.Error
			if !errors.As(err, &re) || re.Reason != tt.reason || re.Attempts != tt.calls {
				t.Fatalf("err = %v, want a retry.Error for %v after %d attempts", err, tt.reason, tt.calls)
			}
			if !errors.Is(err, errBoom) {
				t.Errorf("err %v does not unwrap to the op's error", err)
			}
		})
	}
}

func TestDoDefaultPolicyIsCommonFourTimes(t *testing.T) {
	t.Parallel()
	calls := 0
	_, err := retry.Do(context.Background(), failing(100, errBoom, &calls), retry.WithClock(newFakeClock()))
	if calls != 5 || err == nil {
		t.Errorf("%d calls, err %v; want 5 calls and an error", calls, err)
	}
}

func TestDoReturnsCauseWhenCanceledBeforeStart(t *testing.T) {
	t.Parallel()
	cause := errors.New("shutting down")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	calls := 0
	_, err := retry.Do(ctx, failing(0, nil, &calls))
	if err != cause || calls != 0 {
		t.Errorf("err %v after %d calls; want the cause and no call", err, calls)
	}
}

// TestDoCanceledDuringSleep uses the real clock: the context is canceled by
// the op itself, so Do is asleep on a 1h delay when it happens.
func TestDoCanceledDuringSleep(t *testing.T) {
	t.Parallel()
	cause := errors.New("operator stop")
	ctx, cancel := context.WithCancelCause(context.Background())
	calls := 0
	done := make(chan error, 1)
	go func() {
		_, err := retry.Do(ctx, func(context.Context) (int, error) {
			calls++
			return 0, errBoom
		}, retry.WithPolicy(retry.MustParse("1h")), retry.WithNotify(func(retry.Notice) { cancel(cause) }))
		done <- err
	}()
	select {
	case err := <-done:
		if err != cause {
			t.Errorf("err = %v, want the cancel cause", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Do slept through the cancellation")
	}
	if calls != 1 {
		t.Errorf("%d calls, want 1", calls)
	}
}

func TestDoNeverSleepsPastDeadline(t *testing.T) {
	t.Parallel()
	// The deadline is a real one, so the fake clock starts at the real now;
	// its sleeps take no real time, so the context does not expire meanwhile.
	clock := &fakeClock{now: time.Now()}
	ctx, cancel := context.WithDeadline(context.Background(), clock.Now().Add(10*time.Second))
	defer cancel()
	calls := 0
	_, err := retry.Do(ctx, failing(100, errBoom, &calls),
		retry.WithPolicy(retry.MustParse("4s")), retry.WithClock(clock))
	// 0s: call 1, sleep 4s; 4s: call 2, sleep 4s; 8s: call 3; a 4s sleep
	// would end at 12s, past the 10s deadline, so Do gives up at once.
	if calls != 3 {
		t.Errorf("%d calls, want 3", calls)
	}
	var re *retry.Error
	if !errors.As(err, &re) || re.Reason != retry.ReasonBudget {
		t.Errorf("err = %v, want a budget stop", err)
	}
	if s := clock.Slept(); len(s) != 2 {
		t.Errorf("slept %v, want two 4s sleeps", s)
	}
}

// TestNestedLayersShareOneAllowance nests three Do layers of four attempts
// each around an op that always fails. Left alone, layers would multiply to
// 4×4×4 = 64 calls; the outermost Do's allowance makes it 4, without the
// caller doing anything.
func TestNestedLayersShareOneAllowance(t *testing.T) {
	t.Parallel()
	policy := retry.MustParse("3 1ms")
	clock := newFakeClock()
	calls := 0
	inner := func(ctx context.Context) (int, error) {
		calls++
		return 0, retry.Transient(errBoom)
	}
	run := func(ctx context.Context, extra ...retry.Option) error {
		opts := append([]retry.Option{retry.WithPolicy(policy), retry.WithClock(clock)}, extra...)
		layer := func(op func(context.Context) (int, error)) func(context.Context) (int, error) {
			return func(ctx context.Context) (int, error) { return retry.Do(ctx, op, opts...) }
		}
		_, err := retry.Do(ctx, layer(layer(inner)), opts...)
		return err
	}

	err := run(context.Background())
	if calls != 4 {
		t.Errorf("three layers of 4 attempts: %d calls, want 4", calls)
	}
	var re *retry.Error
	if !errors.As(err, &re) || re.Reason != retry.ReasonBudget || !errors.Is(err, errBoom) {
		t.Errorf("err = %v, want the outer layer's budget stop over the op's error", err)
	}

	calls = 0
	if run(retry.WithAllowance(context.Background(), 1)); calls != 2 {
		t.Errorf("under WithAllowance(ctx, 1): %d calls, want 2", calls)
	}

	calls = 0
	if run(context.Background(), retry.WithOwnAllowance()); calls != 64 {
		t.Errorf("every layer with its own allowance: %d calls, want 64", calls)
	}
}

// TestInnerLayersSpendTheOutersAttempts: an outer layer of 10 attempts
// around an inner one of 2 makes 10 calls in all, the outer's attempts.
func TestInnerLayersSpendTheOutersAttempts(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	calls := 0
	var left []int
	op := func(ctx context.Context) (int, error) {
		calls++
		left = append(left, retry.AllowanceFrom(ctx).Left())
		return 0, errBoom
	}
	inner := func(ctx context.Context) (int, error) {
		return retry.Do(ctx, op, retry.WithPolicy(retry.MustParse("1 1ms")), retry.WithClock(clock))
	}
	_, _ = retry.Do(context.Background(), inner, retry.WithPolicy(retry.MustParse("9 1ms")), retry.WithClock(clock))
	if calls != 10 {
		t.Errorf("%d calls, want 10", calls)
	}
	// Each retry, the inner's and the outer's alike, takes one from the
	// outer's allowance of 9.
	if want := []int{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}; !slices.Equal(left, want) {
		t.Errorf("allowance seen by the op: %v, want %v", left, want)
	}
}

func TestDoDrawsOnBudget(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	b := &retry.Budget{Ratio: 0.5, Floor: -1, Burst: 1, Now: clock.Now}
	b.Withdraw() // empty it
	calls := 0
	op := failing(100, errBoom, &calls)
	_, err := retry.Do(context.Background(), op, retry.WithBudget(b), retry.WithClock(clock))
	// The call deposits 0.5: not enough for a retry.
	var re *retry.Error
	if calls != 1 || !errors.As(err, &re) || re.Reason != retry.ReasonBudget {
		t.Fatalf("%d calls, err %v; want 1 call and a budget stop", calls, err)
	}
	calls = 0
	_, _ = retry.Do(context.Background(), op, retry.WithBudget(b), retry.WithClock(clock))
	// Now 1.0 token: one retry, then stop.
	if calls != 2 {
		t.Errorf("%d calls, want 2", calls)
	}
}

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	e := &retry.Error{Reason: retry.ReasonExhausted, Attempts: 1, Err: errBoom}
	if got := e.Error(); got != "retry: gave up after 1 attempt (exhausted): boom" {
		t.Errorf("Error() = %q", got)
	}
}

// TestDoDefersWithoutSpendingAttempts: resource failures under a policy of
// two attempts are deferrals, with the resource backoff by deferral: they
// spend neither the attempts nor the allowance, and a later unclassified
// failure still has both attempts.
func TestDoDefersWithoutSpendingAttempts(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	calls := 0
	op := func(ctx context.Context) (int, error) {
		calls++
		if calls <= 3 {
			return 0, retry.Resource(errors.New("cluster full"))
		}
		return 0, errBoom
	}
	p := retry.MustParse("1 1ms resource=10,10ms,40ms,none")
	_, err := retry.Do(context.Background(), op, retry.WithPolicy(p), retry.WithClock(clock))
	var re *retry.Error
	if calls != 5 || !errors.As(err, &re) || re.Reason != retry.ReasonExhausted || re.Attempts != 5 {
		t.Fatalf("%d calls, err %v; want 3 deferrals and 2 attempts, then exhausted after 5 calls", calls, err)
	}
	if want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, time.Millisecond}; !slices.Equal(clock.Slept(), want) {
		t.Errorf("slept %v, want %v: the resource backoff by deferral, then the policy's", clock.Slept(), want)
	}
}

// TestNestedLayersShareTheDeferrals: the deferral ceiling, like the
// allowance, is the whole call's: three layers deferring up to 3 times
// each make 4 calls of an op that is always under pressure, not 64.
func TestNestedLayersShareTheDeferrals(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	calls := 0
	full := func(ctx context.Context) (int, error) {
		calls++
		return 0, retry.Resource(errors.New("cluster full"))
	}
	opts := []retry.Option{retry.WithPolicy(retry.MustParse("never resource=3,1ms")), retry.WithClock(clock)}
	layer := func(op func(context.Context) (int, error)) func(context.Context) (int, error) {
		return func(ctx context.Context) (int, error) { return retry.Do(ctx, op, opts...) }
	}
	_, err := retry.Do(context.Background(), layer(layer(full)), opts...)
	if calls != 4 || !errors.Is(err, retry.ErrResource) {
		t.Errorf("%d calls, err %v; want 4 calls (3 deferrals in all) and the resource error", calls, err)
	}
}
