package ops_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/ops"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// TestUnserved: due work that waited a minute is flagged when no live
// worker serves its kind, unless the kind is paused; a live worker that
// did not say what it serves makes the answer unknown (nothing).
func TestUnserved(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "grit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now, err := st.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	long := now.Add(-2 * ops.UnservedAfter)
	if _, err := st.Enqueue(ctx, []task.NewTask{
		{Kind: "resize", RunAt: long}, {Kind: "send", RunAt: long}, {Kind: "send", RunAt: long.Add(time.Second)},
		{Kind: "report", RunAt: now}, // due, not for long
	}); err != nil {
		t.Fatal(err)
	}
	kinds := func() map[string]int {
		t.Helper()
		us, err := ops.Unserved(ctx, st, now)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, u := range us {
			out[u.Kind] = u.Tasks
		}
		return out
	}
	if got := kinds(); len(got) != 2 || got["resize"] != 1 || got["send"] != 2 {
		t.Errorf("no worker: unserved %v, want resize 1 and send 2", got)
	}
	if err := st.RegisterWorker(ctx, task.Worker{ID: "w", Kinds: []string{"resize", "report"}}); err != nil {
		t.Fatal(err)
	}
	if got := kinds(); len(got) != 1 || got["send"] != 2 {
		t.Errorf("a worker serving resize: unserved %v, want send 2", got)
	}
	if _, err := st.Pause(ctx, store.Pause{Scope: store.ScopeKind, Name: "send", Who: "ops"}); err != nil {
		t.Fatal(err)
	}
	if got := kinds(); len(got) != 0 {
		t.Errorf("send paused: unserved %v, want none", got)
	}
	if err := st.RegisterWorker(ctx, task.Worker{ID: "old"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Resume(ctx, store.ScopeKind, "send"); err != nil {
		t.Fatal(err)
	}
	if got := kinds(); len(got) != 0 {
		t.Errorf("a live worker that did not say its kinds: unserved %v, want none (unknown)", got)
	}
	// Two minutes on, neither worker was seen for a minute: none is live.
	later, err := ops.Unserved(ctx, st, now.Add(2*ops.UnservedAfter))
	if err != nil || len(later) != 3 {
		t.Errorf("with no live worker: unserved %+v (%v), want resize, send and report", later, err)
	}
}
