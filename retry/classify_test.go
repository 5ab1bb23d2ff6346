package retry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/grit-run/grit/retry"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	base := errors.New("ledger: balance below zero")
	tests := []struct {
		name      string
		err       error
		class     retry.Class
		delay     time.Duration
		retryable bool
	}{
		{"nil", nil, retry.Unclassified, 0, false},
		{"plain", base, retry.Unclassified, 0, false},
		{"permanent", retry.Permanent(base), retry.ClassPermanent, 0, false},
		{"transient", retry.Transient(base), retry.ClassTransient, 0, true},
		{"after", retry.After(base, 3*time.Second), retry.ClassAfter, 3 * time.Second, true},
		{"after negative", retry.After(base, -time.Second), retry.ClassAfter, 0, true},
		{"resource", retry.Resource(base), retry.ClassResource, 0, true},
		{"wrapped mark", fmt.Errorf("charge card: %w", retry.Permanent(base)), retry.ClassPermanent, 0, false},
		{"outermost mark wins", retry.Permanent(retry.Transient(base)), retry.ClassPermanent, 0, false},
		{"re-marked transient", retry.Transient(fmt.Errorf("x: %w", retry.Resource(base))), retry.ClassTransient, 0, true},
		{"canceled", context.Canceled, retry.ClassCanceled, 0, false},
		{"canceled beats marks", retry.Transient(fmt.Errorf("op: %w", context.Canceled)), retry.ClassCanceled, 0, false},
		{"a downstream's deadline is transient", fmt.Errorf("call ledger: %w", context.DeadlineExceeded), retry.ClassTransient, 0, true},
		{"wrapped ErrTransient", fmt.Errorf("call payments: %w", retry.ErrTransient), retry.ClassTransient, 0, true},
		{"wrapped ErrPermanent", fmt.Errorf("card declined: %w", retry.ErrPermanent), retry.ClassPermanent, 0, false},
		{"wrapped ErrAfter", fmt.Errorf("rate limited: %w", retry.ErrAfter), retry.ClassAfter, 0, true},
		{"wrapped ErrResource", fmt.Errorf("pool: %w", retry.ErrResource), retry.ClassResource, 0, true},
		{"bare ErrTransient", retry.ErrTransient, retry.ClassTransient, 0, true},
		{"two sentinels, the outer wins", fmt.Errorf("%w: %w", retry.ErrPermanent, retry.ErrTransient), retry.ClassPermanent, 0, false},
		{"sentinel under a mark", retry.Permanent(fmt.Errorf("x: %w", retry.ErrTransient)), retry.ClassPermanent, 0, false},
		{"mark under a sentinel's wrapper", fmt.Errorf("x: %w", retry.After(fmt.Errorf("y: %w", retry.ErrTransient), time.Second)), retry.ClassAfter, time.Second, true},
		{"an Is that matches a sentinel", selfMarked{}, retry.ClassResource, 0, true},
		{"joined sentinel", errors.Join(base, retry.ErrTransient), retry.ClassTransient, 0, true},
		{"joined permanent wins", errors.Join(retry.Transient(base), retry.Permanent(base)), retry.ClassPermanent, 0, false},
		{"joined first mark", errors.Join(base, retry.Resource(base), retry.Transient(base)), retry.ClassResource, 0, true},
		{"joined unmarked", errors.Join(base, io.EOF), retry.Unclassified, 0, false},
		{"a mark beats inference", retry.Permanent(io.ErrUnexpectedEOF), retry.ClassPermanent, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			class, delay := retry.Classify(tt.err)
			if class != tt.class || delay != tt.delay {
				t.Errorf("Classify = %v, %v; want %v, %v", class, delay, tt.class, tt.delay)
			}
			if class.Retryable() != tt.retryable {
				t.Errorf("%v.Retryable() = %v, want %v", class, class.Retryable(), tt.retryable)
			}
		})
	}
}

// selfMarked marks itself as resource pressure through its Is method, as
// errors.Is sees it.
type selfMarked struct{}

func (selfMarked) Error() string        { return "pool exhausted" }
func (selfMarked) Is(target error) bool { return target == retry.ErrResource }

// TestSentinelUnderExplicitOnly is the FTL idiom: wrapping the exported
// sentinel makes an error retryable, under an explicit-only policy too,
// exactly as Transient does.
func TestSentinelUnderExplicitOnly(t *testing.T) {
	t.Parallel()
	p := retry.MustParse("3 1s explicit_only")
	now := time.Now()
	for _, err := range []error{
		fmt.Errorf("call payments: %w", retry.ErrTransient),
		retry.Transient(errors.New("call payments")),
	} {
		if d := p.Decide(retry.Attempt{Number: 1, Err: err}, now); !d.Retry || d.Class != retry.ClassTransient {
			t.Errorf("%v: decision %+v, want a transient retry", err, d)
		}
	}
	for _, err := range []error{errors.New("call payments"), fmt.Errorf("call payments: %w", io.ErrUnexpectedEOF)} {
		if d := p.Decide(retry.Attempt{Number: 1, Err: err}, now); d.Retry || d.Reason != retry.ReasonPermanent || d.Class != retry.Unclassified {
			t.Errorf("%v: decision %+v, want an unclassified stop: explicit-only infers nothing", err, d)
		}
	}
}

func TestMarksMatchSentinelsAndUnwrap(t *testing.T) {
	t.Parallel()
	base := errors.New("boom")
	tests := []struct {
		err      error
		sentinel error
	}{
		{retry.Permanent(base), retry.ErrPermanent},
		{retry.Transient(base), retry.ErrTransient},
		{retry.After(base, time.Second), retry.ErrAfter},
		{retry.Resource(base), retry.ErrResource},
	}
	all := []error{retry.ErrPermanent, retry.ErrTransient, retry.ErrAfter, retry.ErrResource}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.sentinel) {
			t.Errorf("%T is not %v", tt.err, tt.sentinel)
		}
		for _, other := range all {
			if other != tt.sentinel && errors.Is(tt.err, other) {
				t.Errorf("%T matches %v too", tt.err, other)
			}
		}
		if !errors.Is(tt.err, base) {
			t.Errorf("%T does not unwrap to its error", tt.err)
		}
		if tt.err.Error() != "boom" {
			t.Errorf("%T.Error() = %q, want the wrapped message", tt.err, tt.err.Error())
		}
	}
	var after *retry.AfterError
	if !errors.As(fmt.Errorf("x: %w", retry.After(base, time.Minute)), &after) || after.Delay != time.Minute {
		t.Error("errors.As does not find the AfterError and its delay")
	}
}

func TestMarksOfNilAreNil(t *testing.T) {
	t.Parallel()
	if retry.Permanent(nil) != nil || retry.Transient(nil) != nil || retry.After(nil, time.Second) != nil || retry.Resource(nil) != nil {
		t.Error("marking a nil error must give nil, so `return retry.Permanent(err)` stays safe")
	}
}
