package batch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/grit-run/grit/retry"
)

func noop(_ context.Context, items []int) ([]int, error) { return make([]int, len(items)), nil }

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		cfg  Config[int, int]
		want string // "" for valid
	}{
		{"flush alone", Config[int, int]{Flush: noop}, ""},
		{"no flush", Config[int, int]{},
			"batch: invalid config: Flush is nil: set the function that sends one batch"},
		{"negative size", Config[int, int]{Flush: noop, MaxSize: -1},
			"batch: invalid config: MaxSize is -1: want the most items per batch (e.g. 50), or 0 for 50"},
		{"negative interval", Config[int, int]{Flush: noop, Interval: -time.Second},
			"batch: invalid config: Interval is -1s: want how long a batch waits to fill (e.g. 100ms), or 0 for 100ms"},
		{"negative in flight", Config[int, int]{Flush: noop, MaxInFlight: -4},
			"batch: invalid config: MaxInFlight is -4: want the most concurrent flushes (e.g. 4), or 0 for 4"},
		{"pending below size", Config[int, int]{Flush: noop, MaxSize: 20, MaxPending: 10},
			"batch: invalid config: MaxPending 10 is less than MaxSize 20: no batch could fill; raise MaxPending or lower MaxSize"},
		{"pending below the default size", Config[int, int]{Flush: noop, MaxPending: 10},
			"batch: invalid config: MaxPending 10 is less than MaxSize 50: no batch could fill; raise MaxPending or lower MaxSize"},
		{"negative timeout and retries mean none", Config[int, int]{Flush: noop, Timeout: -1, Retries: -1}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(tt.cfg)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrConfig) || err.Error() != tt.want {
				t.Errorf("New: got %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestValidateSaysEverything(t *testing.T) {
	t.Parallel()
	err := (&Config[int, int]{MaxSize: -1, MaxInFlight: -1}).validate()
	if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 3 {
		t.Errorf("%d errors, want 3 (flush, size, in flight): %v", n, err)
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	c := Config[int, int]{Flush: noop}.withDefaults()
	if c.MaxSize != 50 || c.Interval != 100*time.Millisecond || c.MaxPending != 500 || c.MaxInFlight != 4 ||
		c.Timeout != 30*time.Second || c.Retries != 3 || c.Backoff != defaultBackoff ||
		c.Rand != retry.DefaultRand || c.Clock != retry.RealClock {
		t.Errorf("defaults: %+v", c)
	}
	if c := (Config[int, int]{MaxSize: 8}).withDefaults(); c.MaxPending != 80 {
		t.Errorf("MaxPending for MaxSize 8: %d, want 80", c.MaxPending)
	}
	if c := (Config[int, int]{Timeout: -1, Retries: -1}).withDefaults(); c.Timeout != -1 || c.Retries != -1 {
		t.Errorf("negative Timeout and Retries became %v and %d, want kept", c.Timeout, c.Retries)
	}
}

func TestDefaultRetryable(t *testing.T) {
	t.Parallel()
	base := errors.New("boom")
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{base, false},
		{retry.Transient(base), true},
		{retry.After(base, time.Second), true},
		{retry.Permanent(base), false},
		{retry.Resource(base), false},
		{retry.Transient(context.Canceled), false},
	} {
		if got := transient(tt.err); got != tt.want {
			t.Errorf("transient(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
