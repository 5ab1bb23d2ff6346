package task

import (
	"fmt"
	"strings"
	"time"
)

// The bounds of a task's durations and due time. Past them a value is a
// mistake (a unit slipped, a year typed wrong), never a plan: the API and
// the CLI refuse it, saying the range; the store (NewTask.Validate) refuses
// a timeout or grace past them too. A due time is checked against the
// clock where a request comes in, not by Validate, which knows no clock
// (a schedule's slots are validated against a time of their own).
const (
	// MaxTimeout is the longest timeout of an attempt: 30 days.
	MaxTimeout = 30 * 24 * time.Hour
	// MaxGrace is the longest grace between SIGTERM and SIGKILL (or a
	// handler's cancellation and its slot being freed): one hour.
	MaxGrace = time.Hour
	// DueWindow is how far from now a due time may be, back or forward:
	// ten years (3,652 days). A snooze's or a retry's delay is bounded by
	// it too.
	DueWindow = 3652 * 24 * time.Hour
)

// TimeoutProblem says what is wrong with timeout d, or "" when nothing
// is: 0 (none), AutoTimeout, or 1ns to MaxTimeout.
func TimeoutProblem(d time.Duration) string {
	switch {
	case d == AutoTimeout || d >= 0 && d <= MaxTimeout:
		return ""
	case d < 0:
		return fmt.Sprintf("%s is negative: want 0 (none) to %s (30 days), or auto", short(d), short(MaxTimeout))
	}
	return fmt.Sprintf("%s is too long: want 0 (none) to %s (30 days)", short(d), short(MaxTimeout))
}

// GraceProblem says what is wrong with grace d, or "" when nothing is:
// 0 (the default) to MaxGrace.
func GraceProblem(d time.Duration) string {
	if d < 0 || d > MaxGrace {
		return fmt.Sprintf("%s is out of range: want 0 (the default) to %s", short(d), short(MaxGrace))
	}
	return ""
}

// DueProblem says what is wrong with due time at, or "" when nothing is:
// within DueWindow of now. (A NewTask's zero RunAt means now, and is not
// checked.)
func DueProblem(at, now time.Time) string {
	if lo, hi := now.Add(-DueWindow), now.Add(DueWindow); at.Before(lo) || at.After(hi) {
		return fmt.Sprintf("%s is more than 10 years from now: want a time from %s to %s",
			at.UTC().Format(time.RFC3339), lo.UTC().Format("2006-01-02"), hi.UTC().Format("2006-01-02"))
	}
	return ""
}

// DelayProblem says what is wrong with delay d (a snooze's, a retry's),
// or "" when nothing is: 0 to DueWindow.
func DelayProblem(d time.Duration) string {
	if d < 0 || d > DueWindow {
		return fmt.Sprintf("%s is out of range: want 0 to %s (10 years)", short(d), short(DueWindow))
	}
	return ""
}

// short is d as Go writes it, without the zero minutes and seconds of a
// whole number of hours ("720h", not "720h0m0s").
func short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "h0m0s") {
		return strings.TrimSuffix(s, "0m0s")
	}
	if strings.HasSuffix(s, "m0s") {
		return strings.TrimSuffix(s, "0s")
	}
	return s
}
