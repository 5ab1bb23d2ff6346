package retry_test

import (
	"math"
	"testing"
	"time"

	"github.com/grit-run/grit/retry"
)

func TestConstant(t *testing.T) {
	t.Parallel()
	b := retry.Constant{Interval: 5 * time.Second}
	for n := 1; n < 20; n++ {
		if got := b.Delay(n, 0, seeded()); got != 5*time.Second {
			t.Fatalf("Delay(%d) = %v, want 5s", n, got)
		}
	}
	if got := (retry.Constant{Interval: -time.Second}).Delay(1, 0, seeded()); got != 0 {
		t.Fatalf("negative interval gave %v, want 0", got)
	}
}

func TestExponentialNoJitter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		b    retry.Exponential
		want []time.Duration
	}{
		{"doubling capped", retry.Exponential{Min: 5 * time.Second, Max: time.Minute, Jitter: retry.JitterNone},
			[]time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}},
		{"multiplier 3", retry.Exponential{Min: time.Second, Max: time.Hour, Multiplier: 3, Jitter: retry.JitterNone},
			[]time.Duration{time.Second, 3 * time.Second, 9 * time.Second, 27 * time.Second}},
		{"defaults", retry.Exponential{Jitter: retry.JitterNone},
			[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}},
		{"uncapped", retry.Exponential{Min: time.Millisecond, Jitter: retry.JitterNone},
			[]time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for i, want := range tt.want {
				if got := tt.b.Delay(i+1, 0, seeded()); got != want {
					t.Errorf("Delay(%d) = %v, want %v", i+1, got, want)
				}
			}
		})
	}
}

func TestExponentialNeverOverflows(t *testing.T) {
	t.Parallel()
	b := retry.Exponential{Min: time.Hour, Jitter: retry.JitterNone}
	for _, n := range []int{60, 1000, math.MaxInt32} {
		if got := b.Delay(n, 0, seeded()); got != math.MaxInt64 {
			t.Errorf("uncapped Delay(%d) = %v, want the largest duration", n, got)
		}
	}
	capped := retry.Exponential{Min: time.Hour, Max: 2 * time.Hour, Jitter: retry.JitterNone}
	if got := capped.Delay(math.MaxInt32, 0, seeded()); got != 2*time.Hour {
		t.Errorf("capped Delay(huge) = %v, want 2h", got)
	}
}

// TestJitterDistribution draws 10,000 delays at the cap for each mode and
// checks their bounds and mean.
func TestJitterDistribution(t *testing.T) {
	t.Parallel()
	const samples = 10_000
	cap := 10 * time.Second
	tests := []struct {
		jitter   retry.Jitter
		lo, hi   time.Duration
		wantMean time.Duration
	}{
		{retry.JitterFull, 0, cap, cap / 2},
		{retry.JitterEqual, cap / 2, cap, cap * 3 / 4},
		{retry.JitterNone, cap, cap, cap},
	}
	for _, tt := range tests {
		t.Run(tt.jitter.String(), func(t *testing.T) {
			t.Parallel()
			b := retry.Exponential{Min: cap, Max: cap, Jitter: tt.jitter}
			r := seeded()
			var sum float64
			distinct := map[time.Duration]bool{}
			for range samples {
				d := b.Delay(5, 0, r)
				if d < tt.lo || d > tt.hi {
					t.Fatalf("delay %v outside [%v, %v]", d, tt.lo, tt.hi)
				}
				sum += float64(d)
				distinct[d] = true
			}
			mean := time.Duration(sum / samples)
			if diff := (mean - tt.wantMean).Abs(); diff > cap/50 {
				t.Errorf("mean %v, want %v ± %v", mean, tt.wantMean, cap/50)
			}
			if tt.jitter != retry.JitterNone && len(distinct) < samples/2 {
				t.Errorf("only %d distinct delays in %d samples: not jittered", len(distinct), samples)
			}
		})
	}
}

func TestDecorrelated(t *testing.T) {
	t.Parallel()
	b := retry.Decorrelated{Min: 100 * time.Millisecond, Max: 5 * time.Second}
	r := seeded()
	prev := time.Duration(0)
	reachedCap := false
	for n := 1; n <= 10_000; n++ {
		d := b.Delay(n, prev, r)
		hi := min(3*max(prev, b.Min), b.Max)
		if d < b.Min || d > hi {
			t.Fatalf("retry %d: delay %v outside [%v, %v] (prev %v)", n, d, b.Min, hi, prev)
		}
		reachedCap = reachedCap || d == b.Max
		prev = d
	}
	if !reachedCap {
		t.Error("decorrelated delays never reached the cap in 10,000 draws")
	}
	if got := (retry.Decorrelated{}).Delay(1, 0, fixedRand(0)); got != time.Second {
		t.Errorf("zero Decorrelated first delay at r=0: %v, want the 1s default floor", got)
	}
}

func TestParseJitter(t *testing.T) {
	t.Parallel()
	for _, j := range []retry.Jitter{retry.JitterFull, retry.JitterEqual, retry.JitterNone} {
		got, err := retry.ParseJitter(j.String())
		if err != nil || got != j {
			t.Errorf("ParseJitter(%q) = %v, %v", j.String(), got, err)
		}
	}
	if _, err := retry.ParseJitter("half"); err == nil {
		t.Error("ParseJitter(half) did not fail")
	}
}
