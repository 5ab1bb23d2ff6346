package task

import (
	"strings"
	"testing"
	"time"
)

func TestBounds(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, got, want string
	}{
		{"timeout none", TimeoutProblem(0), ""},
		{"timeout auto", TimeoutProblem(AutoTimeout), ""},
		{"timeout 30 days", TimeoutProblem(MaxTimeout), ""},
		{"timeout 10,000 years", TimeoutProblem(time.Duration(1<<63 - 1)), "want 0 (none) to 720h (30 days)"},
		{"timeout negative", TimeoutProblem(-time.Second), "-1s is negative"},
		{"grace an hour", GraceProblem(time.Hour), ""},
		{"grace a day", GraceProblem(24 * time.Hour), "24h is out of range: want 0 (the default) to 1h"},
		{"due next year", DueProblem(now.AddDate(1, 0, 0), now), ""},
		{"due year 9999", DueProblem(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), now), "9999-01-01T00:00:00Z is more than 10 years from now: want a time from 2016-06-01 to 2036-05-31"},
		{"due year 1", DueProblem(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), now), "0001-01-01T00:00:00Z is more than 10 years"},
		{"delay a year", DelayProblem(365 * 24 * time.Hour), ""},
		{"delay negative", DelayProblem(-time.Minute), "-1m is out of range: want 0 to 87648h (10 years)"},
	} {
		if c.want == "" && c.got != "" || c.want != "" && !strings.Contains(c.got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
}

// TestValidateBounds: the store refuses what is out of range, naming the
// field and the range.
func TestValidateBounds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		t    NewTask
		want string
	}{
		{NewTask{Kind: "k", Timeout: 200 * 365 * 24 * time.Hour}, "timeout"},
		{NewTask{Kind: "k", Grace: 2 * time.Hour}, "grace"},
	} {
		err := c.t.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "want") {
			t.Errorf("Validate(%+v) = %v, want an error about %s with its range", c.t, err, c.want)
		}
	}
}
