package batch_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/grit-run/grit/batch"
	"github.com/grit-run/grit/retry"
)

// incident replays in fake time the incident the package exists for: 92
// callers at once, batches of 50, the first batch answered after 17s and
// the second's first attempt failing at the 30s deadline with fail. It
// returns each caller's error, the items of the second batch and how often
// Flush answered each item with a success.
func incident(t *testing.T, retries int, fail func(context.Context) error) (errs []error, second []int, successes map[int]int) {
	var mu sync.Mutex
	var calls [][]int
	successes = map[int]int{}
	flush := func(ctx context.Context, items []int) ([]int, error) {
		mu.Lock()
		calls = append(calls, slices.Clone(items))
		n := len(calls)
		mu.Unlock()
		switch n {
		case 1:
			time.Sleep(17 * time.Second)
		case 2:
			return nil, fail(ctx)
		}
		mu.Lock()
		for _, v := range items {
			successes[v]++
		}
		mu.Unlock()
		return tenfold(items), nil
	}
	b := mustNew(t, batch.Config[int, int]{Flush: flush, MaxSize: 50, Retries: retries})
	defer mustClose(t, b)

	errs = make([]error, 92)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			got, err := b.Do(t.Context(), i)
			if err == nil && got != i*10 {
				err = errors.New("wrong result")
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if len(calls) < 2 || len(calls[0]) != 50 || len(calls[1]) != 42 {
		t.Fatalf("batches of %v, want 50 then 42", lens(calls))
	}
	if got, err := b.Do(t.Context(), 1000); got != 10000 || err != nil {
		t.Errorf("a later Send: %d, %v; the batcher must go on serving", got, err)
	}
	return errs, calls[1], successes
}

func lens(calls [][]int) []int {
	var n []int
	for _, c := range calls {
		n = append(n, len(c))
	}
	return n
}

var deadlines = []struct {
	name string
	fail func(context.Context) error
	is   error
}{
	// The server answers DEADLINE_EXCEEDED, marked transient, just before
	// the attempt's own 30s Timeout.
	{"server deadline", func(context.Context) error {
		time.Sleep(29 * time.Second)
		return retry.Transient(errDeadline)
	}, errDeadline},
	// The attempt runs into the batcher's own 30s Timeout.
	{"attempt timeout", func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}, batch.ErrTimeout},
}

func TestIncidentAbsorbed(t *testing.T) {
	t.Parallel()
	for _, tt := range deadlines {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				errs, _, successes := incident(t, 0, tt.fail)
				for i, err := range errs {
					if err != nil {
						t.Errorf("caller %d: %v", i, err)
					}
					if successes[i] != 1 {
						t.Errorf("item %d succeeded %d times in Flush, want once", i, successes[i])
					}
				}
			})
		})
	}
}

func TestIncidentWithoutRetries(t *testing.T) {
	t.Parallel()
	for _, tt := range deadlines {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				errs, second, successes := incident(t, -1, tt.fail)
				for i, err := range errs {
					if !slices.Contains(second, i) {
						if err != nil || successes[i] != 1 {
							t.Errorf("caller %d of the first batch: %v, %d successes; want success", i, err, successes[i])
						}
						continue
					}
					var be *batch.Error
					if !errors.Is(err, tt.is) || !errors.As(err, &be) ||
						be.Items != 42 || be.Attempts != 1 || be.Reason != retry.ReasonExhausted {
						t.Errorf("caller %d of the second batch: %v; want a batch.Error of 42 items, 1 attempt", i, err)
					}
				}
				t.Log(errs[second[0]])
			})
		})
	}
}

func TestIncidentErrorMessage(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		errs, second, _ := incident(t, -1, deadlines[0].fail)
		const want = "batch: flush of 42 items failed after 1 attempt (retries used up): " +
			"rpc error: code = DeadlineExceeded desc = context deadline exceeded"
		if got := errs[second[0]].Error(); got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	})
}

func TestNotRetryable(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"permanent", retry.Permanent(errRejected)},
		{"unclassified", errRejected},
		// Resource pressure is deferred by the callers' policies, for longer
		// than a batch's backoff.
		{"resource", retry.Resource(errRejected)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var r recorder
				flush := func(ctx context.Context, items []int) ([]int, error) {
					if r.record(items) == 1 {
						return nil, tt.err
					}
					return tenfold(items), nil
				}
				clock := &fakeClock{}
				b := mustNew(t, batch.Config[int, int]{Flush: flush, MaxSize: 2, Clock: clock})
				defer mustClose(t, b)
				for _, f := range []*batch.Future[int]{b.Send(t.Context(), 1), b.Send(t.Context(), 2)} {
					_, err := f.Wait(t.Context())
					var be *batch.Error
					if !errors.Is(err, errRejected) || !errors.As(err, &be) || be.Attempts != 1 || be.Reason != retry.ReasonPermanent {
						t.Errorf("got %v, want a batch.Error after 1 attempt, not retryable", err)
					}
				}
				if n, slept := len(r.Calls()), clock.Slept(); n != 1 || len(slept) != 0 {
					t.Errorf("Flush called %d times after %v of backoff, want once and none", n, slept)
				}
				if got, err := b.Do(t.Context(), 3); got != 30 || err != nil {
					t.Errorf("the next batch: %d, %v", got, err)
				}
			})
		})
	}
}

// TestAllowanceShared plays an inner retry layer inside Flush that draws on
// the flush context's allowance: the batch layer retries less, and the two
// together stay within 1 + Retries calls.
func TestAllowanceShared(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name         string
		retries      int
		innerRetries int // per attempt
		wantAttempts int
	}{
		{"default, batch layer alone", 0, 0, 4},
		{"batch layer alone", 2, 0, 3},
		{"inner layer retries once per attempt", 3, 1, 2},
		{"inner layer takes it all", 3, 5, 1},
		{"none", -1, 1, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				attempts, inner := 0, 0
				flush := func(ctx context.Context, items []int) ([]int, error) {
					attempts++
					a := retry.AllowanceFrom(ctx)
					for range tt.innerRetries {
						if a.Take() {
							inner++
						}
					}
					return nil, retry.Transient(errDeadline)
				}
				b := mustNew(t, batch.Config[int, int]{Flush: flush, Retries: tt.retries, Clock: &fakeClock{}})
				defer mustClose(t, b)
				// Each batch has its own allowance.
				for range 2 {
					attempts, inner = 0, 0
					_, err := b.Do(t.Context(), 1)
					var be *batch.Error
					if !errors.As(err, &be) || be.Attempts != tt.wantAttempts || be.Reason != retry.ReasonExhausted {
						t.Errorf("got %v, want a batch.Error after %d attempts, retries used up", err, tt.wantAttempts)
					}
					allowed := 1 + max(tt.retries, 0)
					if tt.retries == 0 {
						allowed = 4
					}
					if attempts != tt.wantAttempts || attempts+inner > allowed {
						t.Errorf("%d attempts and %d inner retries, want %d attempts and %d calls at most",
							attempts, inner, tt.wantAttempts, allowed)
					}
				}
			})
		})
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		errs []error // the attempts' errors, then success
		want []time.Duration
	}{
		{
			"default: equal jitter, the middle of each [half, all] drawn",
			[]error{retry.Transient(errDeadline), retry.Transient(errDeadline), retry.Transient(errDeadline)},
			[]time.Duration{75 * time.Millisecond, 150 * time.Millisecond, 300 * time.Millisecond},
		},
		{
			"retry after",
			[]error{retry.After(errDeadline, 2*time.Second)},
			[]time.Duration{2 * time.Second},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				n := 0
				flush := func(_ context.Context, items []int) ([]int, error) {
					if n++; n <= len(tt.errs) {
						return nil, tt.errs[n-1]
					}
					return tenfold(items), nil
				}
				clock := &fakeClock{}
				b := mustNew(t, batch.Config[int, int]{Flush: flush, Clock: clock, Rand: fixedRand(0.5)})
				defer mustClose(t, b)
				if got, err := b.Do(t.Context(), 1); got != 10 || err != nil {
					t.Fatalf("Do: %d, %v", got, err)
				}
				if got := clock.Slept(); !slices.Equal(got, tt.want) {
					t.Errorf("slept %v, want %v", got, tt.want)
				}
			})
		})
	}
}
