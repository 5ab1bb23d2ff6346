package breaker

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// step is one thing that happens to a circuit, at t0 plus At.
type step struct {
	At    time.Duration
	Do    string // "ok", "fail" (a counted attempt), "probe-ok", "probe-fail", "shed", "allow", "admit"
	State State  // the state expected after the step
	// For "allow": the verdict expected.
	Allow, Probe bool
	Retry        time.Duration // from t0; checked when not allowed
	// For "admit": how many calls ask (N), how many go, and the waits of
	// the others.
	N, Go int
	Wait  []time.Duration
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
		case "shed":
			s.Shed(c, now)
		case "allow-probe":
			if v := s.Allow(c, now); !v.Allow || !v.Probe {
				t.Fatalf("step %d (%s at %v): verdict %+v, want a probe", i, st.Do, st.At, v)
			}
		case "allow":
			v := s.Allow(c, now)
			want := Verdict{Allow: st.Allow, Probe: st.Probe}
			if !st.Allow {
				want.Retry = t0.Add(st.Retry)
			}
			if v != want {
				t.Fatalf("step %d (%s at %v): verdict %+v, want %+v", i, st.Do, st.At, v, want)
			}
		case "admit":
			a := s.Admit(c, st.N, now)
			if a.Go != st.Go || !slices.Equal(a.Wait, st.Wait) {
				t.Fatalf("step %d (%s %d at %v): %d go, waits %v; want %d, %v (ramp %+v)", i, st.Do, st.N, st.At, a.Go, a.Wait, st.Go, st.Wait, c.Ramp)
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

// opened is a circuit of the default settings opened at t0.
var opened = repeat(20, 0, "fail")

// closedAt closes a circuit opened at t0 with the default settings by
// three probes at its first cool-down (1s) that succeed at d.
func closedAt(d time.Duration) []step {
	return cat(opened, repeat(3, time.Second, "allow-probe"), repeat(3, d, "probe-ok"))
}

// grown are the waits of calls turned away by a ramp at rate r0 growing
// by g a call, the first told to come back after first.
func grown(first time.Duration, r0, g float64, n int) []time.Duration {
	out := []time.Duration{first}
	at, r := first, r0
	for range n - 1 {
		r += g
		at += time.Duration(float64(time.Second) / r)
		out = append(out, at)
	}
	return out
}

func ms(ds ...int) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = time.Duration(d) * time.Millisecond
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
			{Do: "allow", Allow: true, State: Closed},
			{Do: "admit", N: 1000, Go: 1000},
		}},
		{"failures under the minimum attempts do not open it", defaults, cat(
			repeat(19, time.Second, "fail"),
			[]step{{At: time.Second, Do: "allow", Allow: true, State: Closed}},
		)},
		{"the ratio opens it once the minimum is reached; the first probe goes a second later", defaults, cat(
			repeat(10, time.Second, "ok"),
			repeat(9, time.Second, "fail"),
			[]step{{At: time.Second, Do: "fail", State: Open}},
			[]step{{At: 1500 * time.Millisecond, Do: "allow", Allow: false, Retry: 2 * time.Second, State: Open}},
			[]step{{At: 1500 * time.Millisecond, Do: "admit", N: 5, Go: 0, Wait: ms(500, 500, 500, 500, 500)}},
		)},
		{"under the ratio it stays closed", defaults, cat(
			repeat(11, time.Second, "ok"),
			repeat(9, time.Second, "fail"),
			[]step{{At: time.Second, Do: "allow", Allow: true, State: Closed}},
		)},
		{"failures that left the window do not count", defaults, cat(
			repeat(15, 0, "fail"),
			repeat(10, 61*time.Second, "fail"),
			[]step{{At: 61 * time.Second, Do: "allow", Allow: true, State: Closed}},
			repeat(10, 62*time.Second, "fail"),
			[]step{{At: 62 * time.Second, Do: "allow", Allow: false, Retry: 63 * time.Second, State: Open}},
		)},
		{"consecutive failures open it whatever the ratio", Settings{Consecutive: 3, MinAttempts: 1000}, []step{
			{Do: "fail"}, {Do: "fail"}, {Do: "ok"}, {Do: "fail"}, {Do: "fail", State: Closed},
			{Do: "fail", State: Open},
		}},
		{"after the cool-down it lets the probes through, no more; the others ask again a cool-down later", defaults, cat(
			opened,
			[]step{
				{At: 999 * time.Millisecond, Do: "allow", Allow: false, Retry: time.Second, State: Open},
				{At: time.Second, Do: "allow", Allow: true, Probe: true, State: HalfOpen},
				{At: time.Second, Do: "allow", Allow: true, Probe: true},
				{At: time.Second, Do: "allow", Allow: true, Probe: true},
				{At: 1500 * time.Millisecond, Do: "allow", Allow: false, Retry: 2500 * time.Millisecond, State: HalfOpen},
			},
		)},
		{"failed probes double the cool-down up to the maximum", defaults, cat(
			opened,
			[]step{
				{At: 1 * time.Second, Do: "allow", Allow: true, Probe: true},
				{At: 1 * time.Second, Do: "probe-fail", State: Open},
				{At: 2 * time.Second, Do: "allow", Allow: false, Retry: 3 * time.Second},
				{At: 3 * time.Second, Do: "allow", Allow: true, Probe: true},
				{At: 3 * time.Second, Do: "probe-fail", State: Open},
				{At: 3 * time.Second, Do: "allow", Allow: false, Retry: 7 * time.Second},
				{At: 7 * time.Second, Do: "allow", Allow: true, Probe: true},
				{At: 7 * time.Second, Do: "probe-fail"},
				{At: 15 * time.Second, Do: "allow", Allow: true, Probe: true},
				{At: 15 * time.Second, Do: "probe-fail"},
				{At: 31 * time.Second, Do: "allow", Allow: true, Probe: true},
				{At: 31 * time.Second, Do: "probe-fail"},
				{At: 31 * time.Second, Do: "allow", Allow: false, Retry: 61 * time.Second},
				{At: 61 * time.Second, Do: "allow", Allow: true, Probe: true},
				{At: 61 * time.Second, Do: "probe-fail"},
				{At: 61 * time.Second, Do: "allow", Allow: false, Retry: 91 * time.Second},
			},
		)},
		{"a longer first cool-down doubles up to a maximum of its own", Settings{CoolDown: 4 * time.Minute, MaxCoolDown: 10 * time.Minute}, cat(
			opened,
			[]step{
				{At: 4 * time.Minute, Do: "allow", Allow: true, Probe: true, State: HalfOpen},
				{At: 4 * time.Minute, Do: "probe-fail", State: Open},
				{At: 5 * time.Minute, Do: "allow", Allow: false, Retry: 12 * time.Minute},
				{At: 12 * time.Minute, Do: "allow", Allow: true, Probe: true},
				{At: 12 * time.Minute, Do: "probe-fail", State: Open},
				{At: 13 * time.Minute, Do: "allow", Allow: false, Retry: 22 * time.Minute},
			},
		)},
		{"probe successes close it, and it ramps up from 10 calls a second", defaults, cat(
			closedAt(2*time.Second),
			[]step{
				{At: 2 * time.Second, Do: "allow", Allow: true, State: Closed},
				// One token at once, then the next at 100ms; the others are told
				// to come back as the rate will be if every call succeeds,
				// 0.15 more a call.
				{At: 2 * time.Second, Do: "admit", N: 4, Go: 1, Wait: grown(100*time.Millisecond, 10, 0.15, 3)},
				// Those turned away before come first.
				{At: 2 * time.Second, Do: "admit", N: 2, Go: 0, Wait: grown(100*time.Millisecond, 10, 0.15, 5)[3:]},
				// At +0.5s, 5 tokens have come: 5 go.
				{At: 2500 * time.Millisecond, Do: "admit", N: 5, Go: 5},
				{At: 2500 * time.Millisecond, Do: "admit", N: 1, Go: 0, Wait: ms(100)},
			},
		)},
		{"successes grow the rate; a failure halves it, once a second, not below the start", defaults, cat(
			closedAt(2*time.Second),
			repeat(100, 2*time.Second, "ok"), // 10 + 100 × 0.15 = 25 a second
			[]step{
				{At: 2 * time.Second, Do: "admit", N: 2, Go: 1, Wait: ms(40)},
				{At: 3 * time.Second, Do: "fail"}, // 12.5
				{At: 3500 * time.Millisecond, Do: "fail"},
				{At: 3500 * time.Millisecond, Do: "shed"}, // within the second: no cut
				{At: 4 * time.Second, Do: "admit", N: 13, Go: 12, Wait: ms(40)},
				{At: 4 * time.Second, Do: "shed"}, // 10, not 6.25
				{At: 5 * time.Second, Do: "admit", N: 11, Go: 10, Wait: ms(100)},
			},
		)},
		{"the ramp ends once nothing cut its rate for RampUp", defaults, cat(
			closedAt(2*time.Second),
			[]step{
				{At: 10 * time.Second, Do: "fail"},
				{At: 39 * time.Second, Do: "admit", N: 11, Go: 10, Wait: ms(100)},
				{At: 40 * time.Second, Do: "admit", N: 1000, Go: 1000},
			},
		)},
		{"old failures do not reopen a circuit that just closed", defaults, cat(
			closedAt(2*time.Second),
			[]step{{At: 3 * time.Second, Do: "fail", State: Closed}},
		)},
		{"a late result of an attempt begun before the opening changes nothing", defaults, cat(
			opened,
			[]step{
				{At: 500 * time.Millisecond, Do: "ok", State: Open},
				{At: time.Second, Do: "allow", Allow: true, Probe: true, State: HalfOpen},
				{At: 1500 * time.Millisecond, Do: "fail", State: HalfOpen},
				{At: 1500 * time.Millisecond, Do: "ok", State: HalfOpen},
			},
		)},
		{"probes that never report give their places back after the longest cool-down", Settings{Probes: 1}, cat(
			opened,
			[]step{
				{At: time.Second, Do: "allow", Allow: true, Probe: true, State: HalfOpen},
				{At: 30 * time.Second, Do: "allow", Allow: false, Retry: 31 * time.Second},
				{At: 31 * time.Second, Do: "allow", Allow: true, Probe: true, State: HalfOpen},
			},
		)},
		{"without a ramp, a closed circuit lets everything through", Settings{RampRate: -1}, cat(
			closedAt(2*time.Second),
			[]step{{At: 2 * time.Second, Do: "admit", N: 1000, Go: 1000, State: Closed}},
		)},
		{"a negative ramp-up turns the ramp off too", Settings{RampUp: -1}, cat(
			closedAt(2*time.Second),
			[]step{{At: 2 * time.Second, Do: "admit", N: 1000, Go: 1000, State: Closed}},
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
	if a := s.Admit(&c, 3, t0); a.Go != 0 || s.Ramping(c, t0) || !slices.Equal(a.Wait, []time.Duration{5 * time.Minute, 5 * time.Minute, 5 * time.Minute}) {
		t.Errorf("an open circuit admits %d (waits %v), ramping %v; want none, each to wait for the probe, false", a.Go, a.Wait, s.Ramping(c, t0))
	}
	s.Close(&c, t0.Add(time.Minute))
	if v := s.Allow(&c, t0.Add(time.Minute)); c.State != Closed || !v.Allow || !c.NextProbe().IsZero() || !s.Ramping(c, t0.Add(time.Minute)) {
		t.Fatalf("closed: %+v, verdict %+v", c, v)
	}
	if a := s.Admit(&c, 3, t0.Add(time.Minute)); a.Go != 1 {
		t.Errorf("closed by an operator: %d of 3 admitted at once, want 1 (the ramp)", a.Go)
	}
	s.Record(&c, false, false, t0.Add(time.Minute))
	s.Reset(&c)
	if v := s.Allow(&c, t0.Add(time.Minute)); !reflect.DeepEqual(c, Circuit{}) || !v.Allow || s.Admit(&c, 9, t0).Go != 9 {
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
	s.Allow(&c, t0.Add(time.Second))
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back Circuit
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, c) {
		t.Fatalf("round trip: %+v (%v), want %+v; json %s", back, err, c, b)
	}
	for range 3 {
		s.Record(&c, true, true, t0.Add(2*time.Second))
	}
	s.Admit(&c, 5, t0.Add(2*time.Second))
	b, err = json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	back = Circuit{}
	if c.Ramp == nil {
		t.Fatal("a circuit closed by probes has no ramp")
	}
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
		{Settings{RampRate: 0.001}, "ramp rate 0.001"},
		{Settings{RampRate: -1}, ""},
		{Settings{RampGrowth: 11}, "ramp growth 11"},
		{Settings{FailureRatio: math.NaN()}, "failure ratio NaN"},
		{Settings{RampRate: math.NaN()}, "ramp rate NaN"},
		{Settings{RampGrowth: math.NaN()}, "ramp growth NaN"},
		{Settings{CoolDown: time.Hour}, ""},
		{Settings{CoolDown: time.Hour, MaxCoolDown: 10 * time.Minute}, "max cool-down 10m0s is shorter than the cool-down 1h0m0s"},
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
