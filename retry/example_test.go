package retry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/grit-run/grit/retry"
)

func ExampleParse() {
	p, err := retry.Parse("10 5s 10m")
	if err != nil {
		panic(err)
	}
	fmt.Println(p.MaxAttempts, p)

	_, err = retry.Parse("10 5x")
	fmt.Println(err)
	// Output:
	// 11 10 5s 10m
	// retry policy "10 5x": "5x" is not a duration (e.g. 300ms, 5s, 2m) (e.g. "10 5s 10m": 10 retries, from 5s doubling up to 10m)
}

func ExampleDo() {
	calls := 0
	charge := func(ctx context.Context) (string, error) {
		calls++
		if calls < 3 {
			return "", retry.Transient(errors.New("payments-api: 503"))
		}
		return "ch_123", nil
	}
	id, err := retry.Do(context.Background(), charge,
		retry.WithPolicy(retry.MustParse("4 10ms 1s")),
		retry.WithNotify(func(n retry.Notice) {
			fmt.Printf("attempt %d failed (%v): %v\n", n.Attempt, n.Err, n.Decision.Reason)
		}))
	fmt.Println(id, err)
	// Output:
	// attempt 1 failed (payments-api: 503): retry
	// attempt 2 failed (payments-api: 503): retry
	// ch_123 <nil>
}

func ExampleClassify() {
	base := errors.New("card declined")
	for _, err := range []error{
		base,
		retry.Permanent(base),
		retry.Transient(base),
		retry.After(base, 30*time.Second),
		retry.Resource(base),
		fmt.Errorf("charge: %w", retry.Permanent(base)),
		context.Canceled,
	} {
		class, delay := retry.Classify(err)
		fmt.Println(class, delay)
	}
	// Output:
	// unclassified 0s
	// permanent 0s
	// transient 0s
	// after 30s
	// resource 0s
	// permanent 0s
	// canceled 0s
}

func ExamplePolicy_Decide() {
	p := retry.MustParse("3 1s 1m jitter=none")
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for n := 1; n <= 4; n++ {
		d := p.Decide(retry.Attempt{Number: n, Err: errors.New("timeout")}, now)
		fmt.Println(n, d.Retry, d.Reason, d.Delay)
	}
	d := p.Decide(retry.Attempt{Number: 2, Err: errors.New("KeyError: 42"), Streak: 2}, now)
	fmt.Println("same failure twice:", d.Reason)
	// Output:
	// 1 true retry 1s
	// 2 true retry 2s
	// 3 true retry 4s
	// 4 false exhausted 0s
	// same failure twice: poison
}

func ExampleFingerprint() {
	a := retry.Fingerprint(fmt.Errorf("settle merchant %d: %w", 42, errors.New(`division by zero in "fee"`)))
	b := retry.Fingerprint(fmt.Errorf("settle merchant %d: %w", 43, errors.New(`division by zero in "tax"`)))
	c := retry.Fingerprint(errors.New("connection refused"))
	fmt.Println(a == b, a == c)
	fmt.Println(retry.Mask(`settle merchant 42: division by zero in "fee"`))
	// Output:
	// true false
	// settle merchant N: division by zero in "…"
}

func ExampleDo_nested() {
	// Three layers, each of four attempts, around a call that always
	// fails: the inner layers draw on the outermost's three retries, so
	// the call is made four times in all, not 4 × 4 × 4 = 64.
	calls := 0
	op := func(context.Context) (int, error) { calls++; return 0, errors.New("unavailable") }
	p := retry.WithPolicy(retry.MustParse("3 1ms"))
	layer := func(next func(context.Context) (int, error)) func(context.Context) (int, error) {
		return func(ctx context.Context) (int, error) { return retry.Do(ctx, next, p) }
	}
	_, err := retry.Do(context.Background(), layer(layer(op)), p)
	fmt.Println(calls, "calls")
	var re *retry.Error
	errors.As(err, &re)
	fmt.Println("the outermost layer stopped:", re.Reason)
	// Output:
	// 4 calls
	// the outermost layer stopped: budget
}

func ExampleWithAllowance() {
	// Three layers, each of four attempts, share one allowance of three
	// retries: the call is made four times in all, not 64.
	calls := 0
	op := func(context.Context) (int, error) { calls++; return 0, retry.Transient(errors.New("unavailable")) }
	p := retry.WithPolicy(retry.MustParse("3 1ms"))
	layer := func(next func(context.Context) (int, error)) func(context.Context) (int, error) {
		return func(ctx context.Context) (int, error) { return retry.Do(ctx, next, p) }
	}
	ctx := retry.WithAllowance(context.Background(), 3)
	_, err := retry.Do(ctx, layer(layer(op)), p)
	fmt.Println(calls, err)
	// Output:
	// 4 retry: gave up after 1 attempt (budget): retry: gave up after 1 attempt (budget): retry: gave up after 4 attempts (exhausted): unavailable
}

func ExampleBudget() {
	// A downstream is down. 100 callers each allow 4 retries, but share a
	// budget: retries may be at most 20% of first attempts, after a burst
	// of 10 (and no floor, to keep the example exact).
	b := &retry.Budget{Ratio: 0.2, Burst: 10, Floor: -1}
	calls := 0
	op := func(context.Context) (int, error) { calls++; return 0, errors.New("down") }
	for range 100 {
		_, _ = retry.Do(context.Background(), op, retry.WithBudget(b),
			retry.WithPolicy(retry.MustParse("4 1ms")))
	}
	fmt.Println(calls, "calls instead of", 100*5)
	// Output:
	// 129 calls instead of 500
}

func ExampleClassify_outage() {
	// A port nothing listens on: dialing it is refused, for real.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	_, refused := net.Dial("tcp", addr)

	for _, err := range []error{
		fmt.Errorf("charge: %w", refused),                  // an outage: transient without a mark
		retry.Permanent(refused),                           // a mark wins over inference
		errors.New("dial tcp: connection refused"),         // a message is not an outage
		&net.DNSError{Name: "ledgr", IsNotFound: true},     // no such host: an answer
		fmt.Errorf("call ledger: %w", io.ErrUnexpectedEOF), // closed before the answer
	} {
		class, _ := retry.Classify(err)
		fmt.Println(class)
	}
	// Output:
	// transient
	// permanent
	// unclassified
	// unclassified
	// transient
}

func ExampleErrTransient() {
	// The FTL idiom: wrapping the sentinel marks the error retryable, as
	// retry.Transient does, under an explicit-only policy too.
	p := retry.MustParse("3 1s explicit_only")
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, err := range []error{
		fmt.Errorf("call payments: %w", retry.ErrTransient),
		errors.New("call payments: 503"),
	} {
		d := p.Decide(retry.Attempt{Number: 1, Err: err}, now)
		fmt.Println(d.Class, d.Retry)
	}
	// Output:
	// transient true
	// unclassified false
}

func ExampleClassPolicy() {
	// Transient failures get 20 retries; the others keep the policy's 5.
	// The limits are compared with the attempt's number, which counts
	// every attempt of the work.
	p := retry.MustParse("5 1s 1m jitter=none transient=20,2s")
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	blip := retry.Transient(errors.New("payments-api: 503"))
	bug := errors.New("KeyError: 42")
	for _, a := range []retry.Attempt{
		{Number: 9, Err: blip},
		{Number: 9, Err: bug},
		{Number: 21, Err: blip},
	} {
		d := p.Decide(a, now)
		fmt.Println(a.Number, d.Class, d.Reason, d.Delay)
	}
	fmt.Println(p.Classes[retry.ClassTransient].MaxAttempts, p)
	// Output:
	// 9 transient retry 2s
	// 9 unclassified exhausted 0s
	// 21 transient exhausted 0s
	// 21 5 1s 1m jitter=none transient=20,2s
}

func ExampleWithOwnAllowance() {
	// An inner call that is a separate piece of work keeps its own
	// retries instead of drawing on its caller's: 2 outer attempts, each
	// making 3 inner calls.
	calls := 0
	op := func(context.Context) (int, error) { calls++; return 0, errors.New("unavailable") }
	inner := func(ctx context.Context) (int, error) {
		return retry.Do(ctx, op, retry.WithPolicy(retry.MustParse("2 1ms")), retry.WithOwnAllowance())
	}
	_, _ = retry.Do(context.Background(), inner, retry.WithPolicy(retry.MustParse("1 1ms")))
	fmt.Println(calls, "calls")
	// Output:
	// 6 calls
}

// A resource failure is a deferral: it uses no attempt, so a policy that
// never retries still waits for room on a full cluster, with the resource
// backoff by deferral, up to its ceiling of deferrals.
func ExamplePolicy_Decide_deferral() {
	p := retry.MustParse("never resource=3,1m,5m,none")
	full := retry.Resource(errors.New("0/3 nodes are available: insufficient cpu"))
	now := time.Now()
	for deferrals := 0; deferrals <= 3; deferrals++ {
		d := p.Decide(retry.Attempt{Number: 1, Err: full, Deferrals: deferrals}, now)
		fmt.Println(d.Retry, d.Deferred, d.Delay, d.Reason)
	}
	d := p.Decide(retry.Attempt{Number: 1, Err: errors.New("exit status 1"), Deferrals: 3}, now)
	fmt.Println(d.Retry, d.Reason)
	// Output:
	// true true 1m0s retry
	// true true 2m0s retry
	// true true 4m0s retry
	// false false 0s exhausted
	// false exhausted
}
