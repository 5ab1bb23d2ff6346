package store

import (
	"testing"
	"time"
)

func TestPressureDoublesAndEases(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	var p Pressure
	at := now
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute} {
		p.Raise(at, time.Second, time.Minute)
		if p.Level != i+1 || !p.Until.Equal(at.Add(want)) {
			t.Fatalf("raise %d: %+v, want level %d until +%v", i+1, p, i+1, want)
		}
		p.Raise(at.Add(want/2), time.Second, time.Minute) // during the hold: the same congestion
		if p.Level != i+1 {
			t.Fatalf("a failure during the hold raised the level to %d", p.Level)
		}
		at = p.Until
	}
	for range 20 {
		p.Ease()
	}
	if p.Level != 0 {
		t.Errorf("level %d after easing more than raising", p.Level)
	}
}
