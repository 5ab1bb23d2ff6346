package rate

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)

func ms(ds ...int) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = time.Duration(d) * time.Millisecond
	}
	return out
}

func TestTake(t *testing.T) {
	t.Parallel()
	type step struct {
		at     time.Duration
		n, go_ int
		wait   []time.Duration
	}
	tests := []struct {
		name        string
		rate, burst float64
		steps       []step
	}{
		{"a new bucket is full, then gives a token every interval", 10, 5, []step{
			{0, 7, 5, ms(100, 200)},
			// Those turned away before come first.
			{0, 2, 0, ms(300, 400)},
			{500 * time.Millisecond, 5, 5, nil},
			{500 * time.Millisecond, 1, 0, ms(100)},
		}},
		{"a burst of 0 is one second's worth, at least 1", 0.5, 0, []step{
			{0, 2, 1, ms(2000)},
			{time.Second, 1, 0, ms(3000)}, // after the one told to come at 2s
			{3 * time.Second, 1, 1, nil},
		}},
		{"tokens stop at the burst", 100, 2, []step{
			{0, 2, 2, nil},
			{time.Hour, 5, 2, ms(10, 20, 30)},
		}},
		{"no rate lets everything through", 0, 0, []step{{0, 1000, 1000, nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b Bucket
			for i, st := range tt.steps {
				a := b.Take(st.n, tt.rate, tt.burst, t0.Add(st.at))
				if a.Go != st.go_ || !slices.Equal(a.Wait, st.wait) {
					t.Fatalf("step %d (%d at %v): %d go, waits %v; want %d, %v (bucket %+v)", i, st.n, st.at, a.Go, a.Wait, st.go_, st.wait, b)
				}
			}
		})
	}
}

// TestTakeKeepsTheRate: however the calls come, no more go in any span
// than the rate allows in it plus the burst.
func TestTakeKeepsTheRate(t *testing.T) {
	t.Parallel()
	const rate, burst = 50.0, 10.0
	var b Bucket
	var starts []time.Duration
	due := []time.Duration{}
	for i := range 2000 { // 2,000 calls arriving within a second
		due = append(due, time.Duration(i)*time.Millisecond/2)
	}
	for len(due) > 0 {
		slices.Sort(due)
		at := due[0]
		due = due[1:]
		if a := b.Take(1, rate, burst, t0.Add(at)); a.Go == 1 {
			starts = append(starts, at)
		} else {
			due = append(due, at+a.Wait[0])
		}
	}
	for i := range starts {
		for j := i; j < len(starts); j++ {
			span := (starts[j] - starts[i]).Seconds()
			if n := float64(j - i + 1); n > rate*span+burst+1e-9 {
				t.Fatalf("%v calls in %.3fs from %v: more than %v a second plus a burst of %v", n, span, starts[i], rate, burst)
			}
		}
	}
	if last := starts[len(starts)-1]; last > 41*time.Second {
		t.Errorf("2,000 calls at 50 a second took %v, want about 40 s: those turned away came back late", last)
	}
}

func TestGiveStopsAtTheBurst(t *testing.T) {
	t.Parallel()
	var b Bucket
	b.Take(3, 1, 4, t0)
	if b.Give(2, 4); b.Tokens != 3 {
		t.Errorf("1 token left, 2 given back: %v, want 3", b.Tokens)
	}
	if b.Give(5, 4); b.Tokens != 4 {
		t.Errorf("5 more given back: %v, want 4 (the burst)", b.Tokens)
	}
}

func TestBucketKeepsAsJSON(t *testing.T) {
	t.Parallel()
	var b Bucket
	b.Take(3, 1, 1, t0)
	j, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var back Bucket
	if err := json.Unmarshal(j, &back); err != nil || !reflect.DeepEqual(back, b) {
		t.Fatalf("round trip %s: %+v (%v), want %+v", j, back, err, b)
	}
}

func TestParseRate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want float64
		says string
	}{
		{"5/s", 5, ""},
		{" 300/m ", 5, ""},
		{"0.5/s", 0.5, ""},
		{"7200/h", 2, ""},
		{"5", 0, "want calls per second"},
		{"0/s", 0, "not a positive number"},
		{"-1/s", 0, "not a positive number"},
		{"x/s", 0, "not a positive number"},
		{"NaN/s", 0, "not a positive number"},
		{"5/d", 0, `per "d"`},
		{"1/h", 1.0 / 3600, ""},
		{"1e12/s", 0, "a billion a second"},
	} {
		got, err := ParseRate(tt.in)
		if tt.says == "" && (err != nil || got != tt.want) || tt.says != "" && (err == nil || !strings.Contains(err.Error(), tt.says)) {
			t.Errorf("ParseRate(%q) = %v, %v; want %v or an error saying %q", tt.in, got, err, tt.want, tt.says)
		}
	}
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"5/s", "300/m", "0.5/h", "", "/", "1e400/s", "-0/s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err == nil && !(r > 0 && r <= 1e9) {
			t.Errorf("%q: accepted rate %v", s, r)
		}
	})
}
