package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/task"
)

// TestProgressLine: a transition's line says what a user needs to read
// it: the attempt, when it runs next, the exit, the fingerprint of a
// failure that may be poison, an outage held, and a deferral.
func TestProgressLine(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 25, 12, 0, 1, 200_000_000, time.UTC)
	code := 1
	for _, c := range []struct {
		t    task.Task
		a    task.Attempt
		want string
	}{
		{task.Task{Name: "settle", State: task.Retrying, Attempt: 2, NextAt: at.Add(2200 * time.Millisecond)},
			task.Attempt{Number: 2, ExitCode: &code, Class: "unclassified", Fingerprint: "4a7c1d9e"},
			"12:00:01.2 settle RETRYING attempt=2 next=12:00:03.4 exit=1 fp=4a7c1d"},
		{task.Task{Name: "settle", State: task.Retrying, Attempt: 2, NextAt: at.Add(30 * time.Second)},
			task.Attempt{Number: 2, ExitCode: &code, Class: "unclassified", Fingerprint: "4a7c1d9e", Decision: "outage"},
			"12:00:01.2 settle RETRYING attempt=2 next=12:00:31.2 exit=1 fp=4a7c1d outage: held"},
		{task.Task{Name: "train", State: task.Retrying, Attempt: 0, Deferrals: 3, NextAt: at.Add(4 * time.Minute)},
			task.Attempt{Number: 1, ExitCode: &code, Class: "resource", Fingerprint: "4a7c1d9e", Decision: "retry"},
			"12:00:01.2 train RETRYING attempt=1 next=12:04:01.2 exit=1 deferred=3"},
	} {
		var out strings.Builder
		p := &progress{out: &out, seen: map[int64]task.State{}, names: map[int64]string{}, changed: make(chan struct{}, 1)}
		p.line(at, c.t, c.a)
		if got := strings.TrimSpace(out.String()); got != c.want {
			t.Errorf("line\n%s\nwant\n%s", got, c.want)
		}
	}
}
