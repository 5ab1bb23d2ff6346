package poll

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestWaitReturnsOnceTheConditionHolds: the condition is checked again
// and again, and the wait ends at the check that finds it true.
func TestWaitReturnsOnceTheConditionHolds(t *testing.T) {
	t.Parallel()
	var checks atomic.Int64
	if !Wait(time.Minute, func() bool { return checks.Add(1) == 3 }) {
		t.Fatal("Wait gave up on a condition that came true at its third check")
	}
	if n := checks.Load(); n != 3 {
		t.Errorf("the condition was checked %d times, want 3: none after it held", n)
	}
}

// TestWaitGivesUp: a condition that never holds ends the wait false once
// within has passed, not before.
func TestWaitGivesUp(t *testing.T) {
	t.Parallel()
	start := time.Now()
	if Wait(50*time.Millisecond, func() bool { return false }) {
		t.Fatal("Wait reported a condition that never holds as held")
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Errorf("Wait gave up after %v, before its 50ms", took)
	}
}

// fatalT records a Fatalf and ends its goroutine, as testing.T does.
type fatalT struct {
	testing.TB
	msg string
}

func (f *fatalT) Helper() {}

func (f *fatalT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// fails runs wait as a test would and returns what it failed with, "" if
// it did not.
func fails(wait func(t testing.TB)) string {
	f := &fatalT{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait(f)
	}()
	<-done
	return f.msg
}

// TestUntilFailsSayingWhat: a failed Until says how long it waited and
// for what, and UntilSays says what its function tells, asked after the
// last check.
func TestUntilFailsSayingWhat(t *testing.T) {
	t.Parallel()
	msg := fails(func(t testing.TB) { Until(t, 20*time.Millisecond, "the task to succeed", func() bool { return false }) })
	if msg != "gave up after 20ms: waiting for the task to succeed" {
		t.Errorf("Until failed with %q", msg)
	}
	var last int
	msg = fails(func(t testing.TB) {
		UntilSays(t, 20*time.Millisecond, func() string { return fmt.Sprintf("the count is %d", last) }, func() bool { last++; return false })
	})
	if want := fmt.Sprintf("the count is %d", last); !strings.HasSuffix(msg, want) || last < 2 {
		t.Errorf("UntilSays failed with %q after %d checks, want it to end with %q", msg, last, want)
	}
	if msg := fails(func(t testing.TB) { Until(t, time.Minute, "nothing", func() bool { return true }) }); msg != "" {
		t.Errorf("Until on a condition that holds failed: %q", msg)
	}
}
