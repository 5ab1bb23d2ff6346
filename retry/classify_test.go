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
	base := io.ErrUnexpectedEOF
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
		{"deadline is unclassified", context.DeadlineExceeded, retry.Unclassified, 0, false},
		{"joined permanent wins", errors.Join(retry.Transient(base), retry.Permanent(base)), retry.ClassPermanent, 0, false},
		{"joined first mark", errors.Join(base, retry.Resource(base), retry.Transient(base)), retry.ClassResource, 0, true},
		{"joined unmarked", errors.Join(base, io.EOF), retry.Unclassified, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
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

func TestMarksMatchSentinelsAndUnwrap(t *testing.T) {
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
	if retry.Permanent(nil) != nil || retry.Transient(nil) != nil || retry.After(nil, time.Second) != nil || retry.Resource(nil) != nil {
		t.Error("marking a nil error must give nil, so `return retry.Permanent(err)` stays safe")
	}
}
