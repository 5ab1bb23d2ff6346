// Package retrycmp benchmarks grit's retry.Do against three other Go retry
// libraries on the same two loops: an operation that succeeds at once, and
// one that fails three times with an ordinary error and then succeeds.
//
// Every library is set up for zero delay between attempts and five attempts
// at most, so the loops measure the retry machinery, not the sleeping. The
// configuration that can be built once (policies, options, retriers,
// executors) is built outside the timed loop; whatever the library does per
// call is inside it. The operation is one method value created before the
// loop, so allocations it would cause as a fresh closure are not counted.
//
// What each library does per call with this configuration:
//
//   - grit: retry.Do(ctx, op, retry.WithPolicy(Policy{MaxAttempts: 5,
//     Backoff: retry.Constant{}})). A zero delay skips the clock's sleep, so
//     no timer is created. Each failure is classified (errors.As on the
//     marked error types) and reads the clock once.
//   - backoff: backoff.Retry(ctx, op, WithBackOff(&ZeroBackOff{}),
//     WithMaxTries(5)). The default MaxElapsedTime (15m) is left on, so each
//     retry also reads the clock. Each call allocates its options struct and
//     a default ExponentialBackOff that the option then replaces; the first
//     retry creates a time.Timer, later retries Reset it; each failure does
//     two errors.As checks.
//   - retry-go: retry.NewWithData[int](Attempts(5), Delay(0),
//     DelayType(FixedDelay), Context(ctx)).Do(op), with the retrier built
//     once. Each retry calls time.After(0), a new timer every time, and each
//     failure is appended to the error log it returns when it gives up
//     (LastErrorOnly is left at false, the default).
//   - failsafe: failsafe.With(retrypolicy.NewBuilder[int]().
//     WithMaxAttempts(5).Build()).WithContext(ctx).Get(op), with the
//     executor built once. Each call builds a policy executor and an
//     execution; each retry creates a time.NewTimer(0).
//
// retry-go and failsafe bind the context when the retrier or executor is
// built. A caller with a per-request context has to build one per call, so
// two extra sub-benchmarks measure that: retry-go-percall calls
// retry.NewWithData with Context(ctx) on every call, and failsafe-percall
// calls executor.WithContext(ctx) on every call.
package retrycmp

import (
	"context"
	"errors"
	"testing"

	retrygo "github.com/avast/retry-go/v5"
	"github.com/cenkalti/backoff/v5"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"

	"github.com/grit-run/grit/retry"
)

const maxAttempts = 5

var errTemp = errors.New("temporary")

// flaky is the retried operation: it fails its first failures calls with
// errTemp, then returns the number of calls made.
type flaky struct {
	failures int
	calls    int
}

func (f *flaky) attempt() (int, error) {
	f.calls++
	if f.calls <= f.failures {
		return 0, errTemp
	}
	return f.calls, nil
}

func (f *flaky) attemptCtx(context.Context) (int, error) { return f.attempt() }

// A library prepares, outside the timed loop, a function that runs one retry
// loop of f.
type library struct {
	name    string
	prepare func(ctx context.Context, f *flaky) func() (int, error)
}

var libraries = []library{
	{"grit", func(ctx context.Context, f *flaky) func() (int, error) {
		op := f.attemptCtx
		opt := retry.WithPolicy(retry.Policy{MaxAttempts: maxAttempts, Backoff: retry.Constant{}})
		return func() (int, error) { return retry.Do(ctx, op, opt) }
	}},
	{"backoff", func(ctx context.Context, f *flaky) func() (int, error) {
		op := f.attempt
		opts := []backoff.RetryOption{
			backoff.WithBackOff(&backoff.ZeroBackOff{}),
			backoff.WithMaxTries(maxAttempts),
		}
		return func() (int, error) { return backoff.Retry(ctx, op, opts...) }
	}},
	{"retry-go", func(ctx context.Context, f *flaky) func() (int, error) {
		op := f.attempt
		r := retrygo.NewWithData[int](
			retrygo.Attempts(maxAttempts),
			retrygo.Delay(0),
			retrygo.DelayType(retrygo.FixedDelay),
			retrygo.Context(ctx),
		)
		return func() (int, error) { return r.Do(op) }
	}},
	{"retry-go-percall", func(ctx context.Context, f *flaky) func() (int, error) {
		op := f.attempt
		return func() (int, error) {
			return retrygo.NewWithData[int](
				retrygo.Attempts(maxAttempts),
				retrygo.Delay(0),
				retrygo.DelayType(retrygo.FixedDelay),
				retrygo.Context(ctx),
			).Do(op)
		}
	}},
	{"failsafe", func(ctx context.Context, f *flaky) func() (int, error) {
		op := f.attempt
		rp := retrypolicy.NewBuilder[int]().WithMaxAttempts(maxAttempts).Build()
		exec := failsafe.With(rp).WithContext(ctx)
		return func() (int, error) { return exec.Get(op) }
	}},
	{"failsafe-percall", func(ctx context.Context, f *flaky) func() (int, error) {
		op := f.attempt
		rp := retrypolicy.NewBuilder[int]().WithMaxAttempts(maxAttempts).Build()
		exec := failsafe.With(rp)
		return func() (int, error) { return exec.WithContext(ctx).Get(op) }
	}},
}

// benchLoop times one retry loop per iteration for every library, and fails
// if a loop returns an error, a wrong result or a wrong number of calls.
func benchLoop(b *testing.B, failures int) {
	want := failures + 1
	for _, lib := range libraries {
		b.Run(lib.name, func(b *testing.B) {
			f := &flaky{failures: failures}
			run := lib.prepare(context.Background(), f)
			b.ReportAllocs()
			for b.Loop() {
				f.calls = 0
				v, err := run()
				if err != nil || v != want || f.calls != want {
					b.Fatalf("got (%d, %v) after %d calls, want (%d, nil) after %d", v, err, f.calls, want, want)
				}
			}
		})
	}
}

func BenchmarkSuccess(b *testing.B) { benchLoop(b, 0) }

func BenchmarkThreeFailures(b *testing.B) { benchLoop(b, 3) }

// TestThreeFailures checks that every library, as configured here, retries an
// ordinary error: four calls, the last one's result, and no error.
func TestThreeFailures(t *testing.T) {
	for _, lib := range libraries {
		t.Run(lib.name, func(t *testing.T) {
			f := &flaky{failures: 3}
			v, err := lib.prepare(context.Background(), f)()
			if err != nil {
				t.Fatal(err)
			}
			if f.calls != 4 || v != 4 {
				t.Errorf("got %d after %d calls, want 4 after 4", v, f.calls)
			}
		})
	}
}

// TestGivesUpAfterFiveAttempts checks the attempt limit is the same five for
// every library, so that no loop is configured looser than the others.
func TestGivesUpAfterFiveAttempts(t *testing.T) {
	for _, lib := range libraries {
		t.Run(lib.name, func(t *testing.T) {
			f := &flaky{failures: 100}
			if _, err := lib.prepare(context.Background(), f)(); err == nil {
				t.Fatal("got no error from an operation that always fails")
			}
			if f.calls != maxAttempts {
				t.Errorf("made %d calls, want %d", f.calls, maxAttempts)
			}
		})
	}
}
