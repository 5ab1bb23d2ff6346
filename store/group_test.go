package store

import (
	"testing"
	"time"
)

func TestPressureDoublesAndEases(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	var p Pressure
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute} {
		p.Raise(now, time.Second, time.Minute)
		if p.Level != i+1 || !p.Until.Equal(now.Add(want)) {
			t.Fatalf("raise %d: %+v, want level %d until +%v", i+1, p, i+1, want)
		}
	}
	p.Raise(now.Add(-time.Hour), time.Second, time.Minute) // a late report does not shorten the hold
	if !p.Until.Equal(now.Add(time.Minute)) {
		t.Errorf("until %v after a late raise", p.Until)
	}
	for range 20 {
		p.Ease()
	}
	if p.Level != 0 {
		t.Errorf("level %d after easing more than raising", p.Level)
	}
}
