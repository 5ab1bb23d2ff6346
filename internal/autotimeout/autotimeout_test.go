package autotimeout

import (
	"strings"
	"testing"
	"time"
)

func TestChoose(t *testing.T) {
	t.Parallel()
	a := Settings{}.WithDefaults() // 5×, 1m floor, 1h ceiling, 20 runs, 30m default
	for _, c := range []struct {
		p99      time.Duration
		runs     int
		want     time.Duration
		wantFrom string
	}{
		{0, 0, 30 * time.Minute, "auto: default, 0 runs so far"},
		{2 * time.Minute, 19, 30 * time.Minute, "auto: default, 19 runs so far"},
		{2 * time.Minute, 20, 10 * time.Minute, "auto: 5 × p99 2m of 20 runs"},
		{72 * time.Second, 140, 6 * time.Minute, "auto: 5 × p99 1m12s of 140 runs"},
		{time.Second, 200, time.Minute, "auto: 5 × p99 1s of 200 runs, floor"},
		{20 * time.Minute, 200, time.Hour, "auto: 5 × p99 20m of 200 runs, ceiling"},
		{time.Duration(1 << 62), 200, time.Hour, "auto: 5 × p99"}, // no overflow
	} {
		got, from := a.Choose(c.p99, c.runs)
		if got != c.want || !strings.HasPrefix(from, c.wantFrom) {
			t.Errorf("Choose(%v, %d) = %v, %q; want %v, %q", c.p99, c.runs, got, from, c.want, c.wantFrom)
		}
	}
	b := Settings{Factor: 2.5, Floor: time.Millisecond, MinRuns: 3}.WithDefaults()
	if got, from := b.Choose(100*time.Millisecond, 3); got != 250*time.Millisecond || from != "auto: 2.5 × p99 100ms of 3 runs" {
		t.Errorf("Choose with factor 2.5 = %v, %q", got, from)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a  Settings
		ok bool
	}{
		{Settings{}, true},
		{Settings{Factor: 3, Floor: time.Second, Ceiling: time.Minute}, true},
		{Settings{Factor: -1}, false},
		{Settings{Floor: -time.Second}, false},
		{Settings{MinRuns: -1}, false},
		{Settings{Floor: 2 * time.Hour}, false}, // above the default ceiling
	} {
		if err := c.a.Validate(); (err == nil) != c.ok {
			t.Errorf("%+v.Validate() = %v, want ok %v", c.a, err, c.ok)
		}
	}
}

func TestP99(t *testing.T) {
	t.Parallel()
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	if got := P99(ds); got != 99*time.Millisecond {
		t.Errorf("P99(1..100ms) = %v, want 99ms", got)
	}
	if got := P99(ds[:1]); got != 100*time.Millisecond {
		t.Errorf("P99 of one = %v", got)
	}
}
