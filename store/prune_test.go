package store_test

import (
	"testing"
	"time"

	"github.com/grit-run/grit/retention"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func TestPruneKeep(t *testing.T) {
	t.Parallel()
	rules := []retention.Rule{
		{State: task.Success, Keep: time.Hour},
		{Queue: "mail", State: task.Success, Keep: 2 * time.Hour},
		{Queue: "mail", State: task.Success, Keep: time.Minute}, // repeated: the longer wins
		{Queue: "mail", State: task.Failed, Keep: time.Second},
	}
	for _, c := range []struct {
		queue string
		state task.State
		keep  time.Duration
		ok    bool
	}{
		{"default", task.Success, time.Hour, true},
		{"mail", task.Success, 2 * time.Hour, true},
		{"mail", task.Failed, time.Second, true},
		{"default", task.Failed, 0, false}, // no rule for the queue, none without one
		{"mail", task.Cancelled, 0, false},
	} {
		keep, ok := store.PruneKeep(rules, c.queue, c.state)
		if keep != c.keep || ok != c.ok {
			t.Errorf("PruneKeep(%s, %s) = %v, %v; want %v, %v", c.queue, c.state, keep, ok, c.keep, c.ok)
		}
	}
	for _, c := range []struct {
		state task.State
		want  time.Duration
		ok    bool
	}{{task.Success, time.Minute, true}, {task.Failed, time.Second, true}, {task.Skipped, 0, false}} {
		if got, ok := store.PruneShortest(rules, c.state); got != c.want || ok != c.ok {
			t.Errorf("PruneShortest(%s) = %v, %v; want %v, %v", c.state, got, ok, c.want, c.ok)
		}
	}
}
