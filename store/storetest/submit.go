package storetest

import (
	"testing"

	"github.com/grit-run/grit/task"
)

var submitTests = map[string]func(*testing.T, *harness){
	"TasksWithoutNeedsAreReadyOthersPending": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a")}})
		if r.ID == 0 || r.State != task.Running || r.CreatedAt.IsZero() {
			t.Errorf("run = %+v, want an id, RUNNING, CreatedAt", r)
		}
		h.wantStates(r.ID, map[string]task.State{"a": task.Ready, "b": task.Pending})
	},
	"DuplicateKeyReturnsExistingRun": func(t *testing.T, h *harness) {
		first := h.submit(task.NewRun{Name: "r", Key: "k", Tasks: []task.NewTask{node("a")}})
		again, err := h.s.SubmitRun(h.ctx, task.NewRun{Name: "r2", Key: "k", Tasks: []task.NewTask{node("x")}})
		wantErr(t, err, task.ErrDuplicate)
		if again.ID != first.ID {
			t.Errorf("duplicate submit returned run %d, want the existing %d", again.ID, first.ID)
		}
		if got := h.states(first.ID); len(got) != 1 || got["a"] == "" {
			t.Errorf("run tasks = %v, want only the first submission's", got)
		}
	},
	"UnknownNeedIsInvalid": func(t *testing.T, h *harness) {
		_, err := h.s.SubmitRun(h.ctx, task.NewRun{Name: "r", Tasks: []task.NewTask{node("a", "nope")}})
		wantErr(t, err, task.ErrInvalid)
	},
	"CycleIsInvalid": func(t *testing.T, h *harness) {
		_, err := h.s.SubmitRun(h.ctx, task.NewRun{Name: "r", Tasks: []task.NewTask{
			node("a", "c"), node("b", "a"), node("c", "b"),
		}})
		wantErr(t, err, task.ErrInvalid)
	},
	"InvalidRunInsertsNothing": func(t *testing.T, h *harness) {
		h.s.SubmitRun(h.ctx, task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "nope")}})
		ts, err := h.s.ListTasks(h.ctx, task.Filter{})
		if err != nil || len(ts) != 0 {
			t.Errorf("tasks after a rejected run = %d (%v), want none", len(ts), err)
		}
	},
	"TasksKeepTheirFields": func(t *testing.T, h *harness) {
		nt := task.NewTask{Name: "a", Kind: "k", Args: []byte(`{"x":1}`), Queue: "q", Group: "g",
			Priority: 3, Policy: "5s", PoisonAfter: 2, Timeout: 7e9, Grace: 2e9}
		r := h.submit(task.NewRun{Name: "r", MaxFailures: 4, Tasks: []task.NewTask{nt}})
		if r.Name != "r" || r.MaxFailures != 4 {
			t.Errorf("run = %+v, want name r, max failures 4", r)
		}
		ts, _ := h.s.ListTasks(h.ctx, task.Filter{RunID: r.ID})
		if len(ts) != 1 {
			t.Fatalf("run has %d tasks, want 1", len(ts))
		}
		got := ts[0]
		if got.RunID != r.ID || got.Name != "a" || got.Kind != "k" || string(got.Args) != `{"x":1}` ||
			got.Queue != "q" || got.Group != "g" || got.Priority != 3 || got.Policy != "5s" ||
			got.PoisonAfter != 2 || got.Timeout != 7e9 || got.Grace != 2e9 {
			t.Errorf("task = %+v, want the fields submitted", got)
		}
	},
}
