package breaker_test

import (
	"fmt"
	"time"

	"github.com/grit-run/grit/breaker"
)

// A downstream fails; the circuit opens, probes it after a second,
// closes when the probes succeed, and ramps dispatch back up: a backlog
// of 100 calls goes at 10 a second at first, growing with each success.
// The calls turned away are told when to come back as if every call
// succeeds: in 6.1 s, not the 9.9 s that 10 a second would take.
func Example() {
	s := breaker.Settings{MinAttempts: 4, Probes: 1}
	var c breaker.Circuit
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for range 4 {
		s.Record(&c, false, false, now)
	}
	fmt.Println(c.State, "until", c.NextProbe().Format(time.TimeOnly))
	v := s.Allow(&c, now.Add(500*time.Millisecond))
	fmt.Println("at +0.5s allowed:", v.Allow)
	v = s.Allow(&c, now.Add(time.Second))
	fmt.Println("at +1s allowed:", v.Allow, "as a probe:", v.Probe, "state:", c.State)
	s.Record(&c, true, v.Probe, now.Add(2*time.Second))
	a := s.Admit(&c, 100, now.Add(2*time.Second))
	fmt.Println(c.State, "at +2s:", a.Go, "of 100 go; the last waits", a.Wait[len(a.Wait)-1])
	for range a.Go + 10 {
		s.Record(&c, true, false, now.Add(3*time.Second))
	}
	a = s.Admit(&c, 100, now.Add(3*time.Second))
	fmt.Printf("at +3s, after 11 successes: %d more go (%.2f a second)\n", a.Go, c.Ramp.Rate)
	// Output:
	// open until 10:00:01
	// at +0.5s allowed: false
	// at +1s allowed: true as a probe: true state: half-open
	// closed at +2s: 1 of 100 go; the last waits 6.098468374s
	// at +3s, after 11 successes: 11 more go (11.65 a second)
}
