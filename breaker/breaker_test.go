package breaker

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// step is one thing that happens to a circuit, at t0 plus At.
type step struct {
	At    time.Duration
	Do    string // "ok", "fail" (a counted attempt), "probe-ok", "probe-fail", "allow"
	State State  // the state expected after the step
	// For "allow": the verdict expected.
	Allow, Probe bool
	Share        float64
	Retry        time.Duration // from t0; checked when not allowed
}

func run(t *testing.T, s Settings, c *Circuit, steps []step) {
	t.Helper()
	for i, st := range steps {
		now := t0.Add(st.At)
		switch st.Do {
		case "ok", "fail":
			s.Record(c, st.Do == "ok", false, now)
		case "probe-ok", "probe-fail":
			s.Record(c, st.Do == "probe-ok", true, now)
		case "allow":
			v := s.Allow(c, now)
			want := Verdict{Allow: st.Allow, Probe: st.Probe, Share: st.Share}
			if !st.Allow {
				want.Retry = t0.Add(st.Retry)
			}
			if v.Allow != want.Allow || v.Probe != want.Probe || !near(v.Share, want.Share) || !v.Retry.Equal(want.Retry) {
				t.Fatalf("step %d (%s at %v): verdict %+v, want %+v", i, st.Do, st.At, v, want)
			}
		default:
			t.Fatalf("step %d: unknown %q", i, st.Do)
		}
		if got := c.state(); st.State != "" && got != st.State {
			t.Fatalf("step %d (%s at %v): state %s, want %s (circuit %+v)", i, st.Do, st.At, got, st.State, *c)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func repeat(n int, at time.Duration, do string) []step {
	out := make([]step, n)
	for i := range out {
		out[i] = step{At: at, Do: do}
	}
	return out
}

func cat(parts ...[]step) []step {
	var out []step
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestCircuit(t *testing.T) {
	t.Parallel()
	defaults := Settings{}
	tests := []struct {
		name  string
		s     Settings
		steps []step
	}{
		{"a new circuit lets everything through", defaults, []step{
			{Do: "allow", Allow: true, Share: 1, State: Closed},
		}},
		{"failures under the minimum attempts do not open it", defaults, cat(
			repeat(19, time.Second, "fail"),
			[]step{{At: time.Second, Do: "allow", Allow: true, Share: 1, State: Closed}},
		)},
		{"the ratio opens it once the minimum is reached", defaults, cat(
			repeat(10, time.Second, "ok"),
			repeat(9, time.Second, "fail"),
			[]step{{At: time.Second, Do: "fail", State: Open}},
			[]step{{At: 2 * time.Second, Do: "allow", Allow: false, Retry: 31 * time.Second, State: Open}},
		)},
		{"under the ratio it stays closed", defaults, cat(
			repeat(11, time.Second, "ok"),
			repeat(9, time.Second, "fail"),
			[]step{{At: time.Second, Do: "allow", Allow: true, Share: 1, State: Closed}},
		)},
		{"failures that left the window do not count", defaults, cat(
			repeat(15, 0, "fail"),
			repeat(10, 61*time.Second, "fail"),
			[]step{{At: 61 * time.Second, Do: "allow", Allow: true, Share: 1, State: Closed}},
			repeat(10, 62*time.Second, "fail"),
			[]step{{At: 62 * time.Second, Do: "allow", Allow: false, Retry: 92 * time.Second, State: Open}},
		)},
		{"consecutive failures open it whatever the ratio", Settings{Consecutive: 3, MinAttempts: 1000}, []step{
			{Do: "fail"}, {Do: "fail"}, {Do: "ok"}, {Do: "fail"}, {Do: "fail", State: Closed},
			{Do: "fail", State: Open},
		}},
		{"after the cool-down it lets the probes through, no more", defaults, cat(
			repeat(20, 0, "fail"),
			[]step{
				{At: 29 * time.Second, Do: "allow", Allow: false, Retry: 30 * time.Second, State: Open},
				{At: 30 * time.Second, Do: "allow", Allow: true, Probe: true, State: HalfOpen},
				{At: 30 * time.Second, Do: "allow", Allow: true, Probe: true},
				{At: 30 * time.Second, Do: "allow", Allow: true, Probe: true},
				{At: 31 * time.Second, Do: "allow", Allow: false, Retry: 60 * time.Second, State: HalfOpen},
			},
		)},
		{"probe successes close it, and dispatch ramps up", defaults, cat(
			repeat(20, 0, "fail"),
			[]step{
				{At: 30 * time.Second, Do: "allow", Allow: true, Probe: true},
				{At: 30 * time.Second, Do: "allow", Allow: true, Probe: true},
				{At: 30 * time.Second, Do: "allow", Allow: true, Probe: true},
				{At: 31 * time.Second, Do: "probe-ok", State: HalfOpen},
				{At: 31 * time.Second, Do: "probe-ok", State: HalfOpen},
				{At: 40 * time.Second, Do: "probe-ok", State: Closed},
				{At: 40 * time.Second, Do: "allow", Allow: true, Share: 0.1},
				{At: 55 * time.Second, Do: "allow", Allow: true, Share: 0.55},
				{At: 70 * time.Second, Do: "allow", Allow: true, Share: 1},
			},
		)},
		{"old failures do not reopen a circuit that just closed", defaults, cat(
			repeat(20, 0, "fail"),
			[]step{{At: 30 * time.Second, Do: "allow", Allow: true, Probe: true}},
			[]step{{At: 30 * time.Second, Do: "allow", Allow: true, Probe: true}},
			[]step{{At: 30 * time.Second, Do: "allow", Allow: true, Probe: true}},
			repeat(3, 31*time.Second, "probe-ok"),
			[]step{{At: 32 * time.Second, Do: "fail", State: Closed}},
		)},
		{"a probe failure reopens it for twice as long, up to the maximum", Settings{CoolDown: 4 * time.Minute, MaxCoolDown: 10 * time.Minute}, cat(
			repeat(20, 0, "fail"),
			[]step{
				{At: 4 * time.Minute, Do: "allow", Allow: true, Probe: true, State: HalfOpen},
				{At: 4 * time.Minute, Do: "probe-fail", State: Open},
				{At: 5 * time.Minute, Do: "allow", Allow: false, Retry: 12 * time.Minute},
				{At: 12 * time.Minute, Do: "allow", Allow: true, Probe: true},
				{At: 12 * time.Minute, Do: "probe-fail", State: Open},
				{At: 13 * time.Minute, Do: "allow", Allow: false, Retry: 22 * time.Minute},
			},
		)},
		{"a late result of an attempt begun before the opening changes nothing", defaults, cat(
			repeat(20, 0, "fail"),
			[]step{
				{At: time.Second, Do: "ok", State: Open},
				{At: 30 * time.Second, Do: "allow", Allow: true, Probe: true, State: HalfOpen},
				{At: 31 * time.Second, Do: "fail", State: HalfOpen},
				{At: 31 * time.Second, Do: "ok", State: HalfOpen},
			},
		)},
		{"probes that never report give their places back after a cool-down", Settings{Probes: 1}, cat(
			repeat(20, 0, "fail"),
			[]step{
				{At: 30 * time.Second, Do: "allow", Allow: true, Probe: true, State: HalfOpen},
				{At: 59 * time.Second, Do: "allow", Allow: false, Retry: 60 * time.Second},
				{At: 60 * time.Second, Do: "allow", Allow: true, Probe: true, State: HalfOpen},
			},
		)},
		{"without a ramp, a closed circuit lets everything through", Settings{RampUp: -1}, cat(
			repeat(20, 0, "fail"),
			[]step{{At: 30 * time.Second, Do: "allow", Allow: true, Probe: true}},
			[]step{{At: 30 * time.Second, Do: "allow", Allow: true, Probe: true}},
			[]step{{At: 30 * time.Second, Do: "allow", Allow: true, Probe: true}},
			repeat(3, 31*time.Second, "probe-ok"),
			[]step{{At: 31 * time.Second, Do: "allow", Allow: true, Share: 1, State: Closed}},
		)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var c Circuit
			run(t, tt.s, &c, tt.steps)
		})
	}
}

func TestOperatorActions(t *testing.T) {
	t.Parallel()
	var s Settings
	var c Circuit
	s.Trip(&c, t0, 5*time.Minute)
	if c.State != Open || !c.NextProbe().Equal(t0.Add(5*time.Minute)) || c.Opens != 1 {
		t.Fatalf("tripped: %+v, next probe %v", c, c.NextProbe())
	}
	if sh := s.Share(c, t0); sh != 0 {
		t.Errorf("share of an open circuit %v, want 0", sh)
	}
	s.Close(&c, t0.Add(time.Minute))
	if sh := s.Share(c, t0.Add(time.Minute+15*time.Second)); !near(sh, 0.55) {
		t.Errorf("share halfway up the ramp %v, want 0.55", sh)
	}
	if v := s.Allow(&c, t0.Add(time.Minute)); c.State != Closed || !v.Allow || !near(v.Share, 0.1) || !c.NextProbe().IsZero() {
		t.Fatalf("closed: %+v, verdict %+v", c, v)
	}
	s.Record(&c, false, false, t0.Add(time.Minute))
	s.Reset(&c)
	if v := s.Allow(&c, t0.Add(time.Minute)); !reflect.DeepEqual(c, Circuit{}) || !v.Allow || v.Share != 1 {
		t.Fatalf("reset: %+v, verdict %+v", c, v)
	}
}

func TestCounts(t *testing.T) {
	t.Parallel()
	var s Settings
	var c Circuit
	for i := range 10 {
		s.Record(&c, i%3 != 0, false, t0.Add(time.Duration(i)*10*time.Second))
	}
	// Attempts at 0..90s: at 95s the window (60s, in 6s buckets) holds
	// those from 36s on: 40..90s, of which 60s and 90s failed.
	if f, a := s.Counts(c, t0.Add(95*time.Second)); f != 2 || a != 6 {
		t.Errorf("counts at 95s: %d failures of %d, want 2 of 6", f, a)
	}
	if len(c.Buckets) > 10 {
		t.Errorf("%d buckets kept, want at most 10", len(c.Buckets))
	}
}

// TestCircuitKeepsAsJSON: a store keeps a circuit as JSON and gets back
// the same circuit.
func TestCircuitKeepsAsJSON(t *testing.T) {
	t.Parallel()
	var s Settings
	var c Circuit
	for range 20 {
		s.Record(&c, false, false, t0)
	}
	s.Allow(&c, t0.Add(30*time.Second))
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back Circuit
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, c) {
		t.Fatalf("round trip: %+v (%v), want %+v; json %s", back, err, c, b)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    Settings
		says string
	}{
		{Settings{}, ""},
		{Settings{FailureRatio: 1.5}, "failure ratio 1.5: want a number from 0 to 1"},
		{Settings{RampStart: -0.1}, "ramp start -0.1"},
		{Settings{FailureRatio: math.NaN()}, "failure ratio NaN"},
		{Settings{RampStart: math.NaN()}, "ramp start NaN"},
		{Settings{CoolDown: time.Hour}, "max cool-down 10m0s is shorter than the cool-down 1h0m0s"},
		{Settings{Window: -time.Second}, "negative window"},
		{Settings{Probes: -1}, "negative buckets"},
	}
	for _, tt := range tests {
		err := tt.s.Validate()
		if tt.says == "" && err != nil || tt.says != "" && (err == nil || !strings.Contains(err.Error(), tt.says)) {
			t.Errorf("%+v: error %v, want one saying %q", tt.s, err, tt.says)
		}
	}
}
