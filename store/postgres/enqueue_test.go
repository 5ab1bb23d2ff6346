package postgres_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestBulkEnqueueReturnsTheStoredTasks: a batch large enough to go by COPY
// returns, field for field, the tasks the database then reads back.
func TestBulkEnqueueReturnsTheStoredTasks(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ctx := bounded(t)
	now, err := s.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ts := make([]task.NewTask, 1500)
	for i := range ts {
		ts[i] = task.NewTask{Kind: "k"}
		if i%3 == 0 {
			ts[i] = task.NewTask{Name: "n", Kind: "j", Args: []byte(`{"i":1}`), Queue: "q", Group: "g",
				Priority: i, Policy: "5s", PoisonAfter: 3, Timeout: time.Second, Grace: time.Millisecond,
				RunAt: now.Add(time.Duration(i) * time.Second).Add(123 * time.Nanosecond)}
		}
	}
	got, err := s.Enqueue(ctx, ts)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := s.ListTasks(ctx, task.Filter{})
	if err != nil || len(stored) != len(ts) {
		t.Fatalf("%d tasks stored (%v), want %d", len(stored), err, len(ts))
	}
	byID := map[int64]task.Task{}
	for _, st := range stored {
		byID[st.ID] = st
	}
	for i, g := range got {
		if g.Existed || !reflect.DeepEqual(g.Task, byID[g.ID]) {
			t.Fatalf("task %d: Enqueue returned\n%+v\nthe database has\n%+v", i, g, byID[g.ID])
		}
		if g.Kind != ts[i].Kind {
			t.Fatalf("task %d is of kind %q, want %q: out of order", i, g.Kind, ts[i].Kind)
		}
	}
	if c, err := s.Claim(ctx, store.ClaimRequest{Worker: "w", Limit: 2000}); err != nil || len(c) != 1000+1 {
		t.Errorf("claimed %d (%v), want the 1001 due now", len(c), err)
	}
}
