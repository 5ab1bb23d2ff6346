package server_test

import (
	"testing"
	"time"

	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/internal/sched"
	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/task"
)

// TestServerTicksSchedules: a fleet of remote workers has its schedules:
// grit server ticks them as a Go worker does.
func TestServerTicksSchedules(t *testing.T) {
	h := start(t, server.Config{Schedules: 100 * time.Millisecond}, "")
	now, err := h.store.Now(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	s := schedule.Schedule{Name: "beat", Every: time.Second, Overlap: schedule.Allow, Task: schedule.Task{Kind: "beat"}}
	if err := sched.Declare(ctx(t), h.store, now, s); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ts, err := h.store.ListTasks(ctx(t), task.Filter{Kind: "beat"})
		if err != nil {
			t.Fatal(err)
		}
		if len(ts) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d tasks of the schedule after 20s, want 2: the server does not tick it", len(ts))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
