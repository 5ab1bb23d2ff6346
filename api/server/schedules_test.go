package server_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/internal/sched"
	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/task"
)

// TestServerTicksSchedules: a fleet of remote workers has its schedules:
// grit server ticks them as a Go worker does.
func TestServerTicksSchedules(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{Schedules: 100 * time.Millisecond}, "")
	now, err := h.store.Now(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	s := schedule.Schedule{Name: "beat", Every: time.Second, Overlap: schedule.Allow, Task: schedule.Task{Kind: "beat"}}
	if err := sched.Declare(ctx(t), h.store, now, s); err != nil {
		t.Fatal(err)
	}
	var n int
	poll.UntilSays(t, 20*time.Second, func() string { return fmt.Sprintf("%d tasks of the schedule, want 2: the server does not tick it", n) }, func() bool {
		ts, err := h.store.ListTasks(ctx(t), task.Filter{Kind: "beat"})
		if err != nil {
			t.Fatal(err)
		}
		n = len(ts)
		return n >= 2
	})
}
