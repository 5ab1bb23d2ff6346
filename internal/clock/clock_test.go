package clock

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func fired(c <-chan time.Time) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestFakeTimer(t *testing.T) {
	t.Parallel()
	f := NewFake(t0)
	tm := f.NewTimer(time.Second)
	f.Advance(999 * time.Millisecond)
	if fired(tm.C()) {
		t.Fatal("the timer fired before its time")
	}
	f.Advance(time.Millisecond)
	if !fired(tm.C()) {
		t.Fatal("the timer did not fire at its time")
	}
	f.Advance(time.Hour)
	if fired(tm.C()) {
		t.Fatal("a timer fired twice")
	}
	if tm.Reset(time.Second); f.Waiters() != 1 {
		t.Fatalf("%d waiters after Reset, want 1", f.Waiters())
	}
	if !tm.Stop() || f.Waiters() != 0 {
		t.Fatal("Stop of an active timer reported it inactive, or it still waits")
	}
	f.Advance(time.Hour)
	if fired(tm.C()) {
		t.Fatal("a stopped timer fired")
	}
}

func TestFakeTicker(t *testing.T) {
	t.Parallel()
	f := NewFake(t0)
	tk := f.NewTicker(time.Second)
	for i := range 3 {
		f.Advance(time.Second)
		if !fired(tk.C()) {
			t.Fatalf("tick %d missing", i)
		}
	}
	f.Advance(10 * time.Second) // one tick waits, as with time.Ticker
	if !fired(tk.C()) || fired(tk.C()) {
		t.Fatal("after a long pass, want exactly one tick waiting")
	}
	if !f.Now().Equal(t0.Add(13 * time.Second)) {
		t.Fatalf("now %v", f.Now())
	}
	f.Set(t0) // never back
	if !f.Now().Equal(t0.Add(13 * time.Second)) {
		t.Fatal("the clock went back")
	}
}
