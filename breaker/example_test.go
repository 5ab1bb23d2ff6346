package breaker_test

import (
	"fmt"
	"time"

	"github.com/grit-run/grit/breaker"
)

// A downstream fails; the circuit opens, probes it after the cool-down,
// closes when the probes succeed, and ramps dispatch back up.
func Example() {
	s := breaker.Settings{MinAttempts: 4, Probes: 1, CoolDown: 10 * time.Second, RampUp: 20 * time.Second}
	var c breaker.Circuit
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for range 4 {
		s.Record(&c, false, false, now)
	}
	fmt.Println(c.State, "until", c.NextProbe().Format(time.TimeOnly))
	v := s.Allow(&c, now.Add(5*time.Second))
	fmt.Println("at +5s allowed:", v.Allow)
	v = s.Allow(&c, now.Add(10*time.Second))
	fmt.Println("at +10s allowed:", v.Allow, "as a probe:", v.Probe, "state:", c.State)
	s.Record(&c, true, v.Probe, now.Add(11*time.Second))
	for _, d := range []time.Duration{11, 21, 31} {
		v = s.Allow(&c, now.Add(d*time.Second))
		fmt.Printf("%s at +%ds: share %.2f\n", c.State, d, v.Share)
	}
	// Output:
	// open until 10:00:10
	// at +5s allowed: false
	// at +10s allowed: true as a probe: true state: half-open
	// closed at +11s: share 0.10
	// closed at +21s: share 0.55
	// closed at +31s: share 1.00
}
