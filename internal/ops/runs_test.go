package ops_test

import (
	"testing"

	"github.com/grit-run/grit/internal/ops"
	"github.com/grit-run/grit/task"
)

// TestProgressOf: a run's progress counts the tasks ended for good, and it
// is blocked while a dead letter holds it and nothing of it runs or waits
// to run.
func TestProgressOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		run     task.State
		counts  map[task.State]int
		done    int
		total   int
		blocked bool
	}{
		{"under way", task.Running, map[task.State]int{task.Success: 2, task.Running: 1, task.Pending: 3}, 2, 6, false},
		{"dead letter, a sibling still runs", task.Running, map[task.State]int{task.DeadLetter: 1, task.Running: 1, task.Pending: 2}, 0, 4, false},
		{"dead letter, the rest waits for it", task.Running, map[task.State]int{task.Success: 1, task.DeadLetter: 1, task.Pending: 2}, 1, 4, true},
		{"ended", task.Failed, map[task.State]int{task.Failed: 1, task.UpstreamFailed: 2, task.Success: 1}, 4, 4, false},
		{"no tasks", task.Running, nil, 0, 0, false},
	} {
		p := ops.ProgressOf(c.run, c.counts)
		if p.Done != c.done || p.Total != c.total || p.Blocked != c.blocked {
			t.Errorf("%s: %+v, want done %d of %d, blocked %v", c.name, p, c.done, c.total, c.blocked)
		}
	}
	if got := (ops.RunProgress{Done: 1, Total: 3}).Percent(); got != 33 {
		t.Errorf("1 of 3 is %d%%, want 33", got)
	}
}
