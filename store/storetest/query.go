package storetest

import (
	"slices"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func (h *harness) list(f task.Filter) []int64 {
	h.t.Helper()
	ts, err := h.s.ListTasks(h.ctx, f)
	if err != nil {
		h.t.Fatalf("list tasks %+v: %v", f, err)
	}
	return ids(ts)
}

var queryTests = map[string]func(*testing.T, *harness){
	"UnknownIDsAreNotFound": func(t *testing.T, h *harness) {
		_, err := h.s.GetTask(h.ctx, 999)
		wantErr(t, err, task.ErrNotFound)
		_, err = h.s.GetRun(h.ctx, 999)
		wantErr(t, err, task.ErrNotFound)
		_, err = h.s.FindRun(h.ctx, "nope")
		wantErr(t, err, task.ErrNotFound)
		_, err = h.s.Attempts(h.ctx, 999)
		wantErr(t, err, task.ErrNotFound)
		_, err = h.s.Edges(h.ctx, 999)
		wantErr(t, err, task.ErrNotFound)
	},
	"ListFiltersByRunStateKindQueue": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a")}})
		ts := h.enqueue(task.NewTask{Kind: "x", Queue: "q1"}, task.NewTask{Kind: "y", Queue: "q2"})
		all := h.states(r.ID)
		if len(all) != 2 {
			t.Errorf("run lists %d tasks, want 2", len(all))
		}
		checks := []struct {
			f    task.Filter
			want int
		}{
			{task.Filter{States: []task.State{task.Pending}}, 1},
			{task.Filter{States: []task.State{task.Ready, task.Pending}}, 4},
			{task.Filter{Kind: "x"}, 1},
			{task.Filter{Queue: "q2"}, 1},
			{task.Filter{Queue: "q2", Kind: "x"}, 0},
			{task.Filter{}, 4},
		}
		for _, c := range checks {
			if got := h.list(c.f); len(got) != c.want {
				t.Errorf("filter %+v: %d tasks, want %d", c.f, len(got), c.want)
			}
		}
		if got := h.list(task.Filter{Kind: "y"}); !slices.Equal(got, []int64{ts[1].ID}) {
			t.Errorf("kind y: %v, want [%d]", got, ts[1].ID)
		}
	},
	"ListPagesByID": func(t *testing.T, h *harness) {
		ts := h.enqueue(job("k"), job("k"), job("k"), job("k"), job("k"))
		var got []int64
		for after := int64(0); ; {
			page := h.list(task.Filter{AfterID: after, Limit: 2})
			if len(page) == 0 {
				break
			}
			if len(page) > 2 {
				t.Fatalf("page of %d, want at most 2", len(page))
			}
			got = append(got, page...)
			after = page[len(page)-1]
		}
		if !slices.Equal(got, ids(ts)) {
			t.Errorf("pages gave %v, want %v", got, ids(ts))
		}
	},
	"AttemptsOldestFirst": func(t *testing.T, h *harness) {
		h.enqueue(job("k"))
		c1 := h.take("k")
		h.finish(store.Finish{TaskID: c1.ID, Token: c1.LeaseToken, State: task.Retrying})
		c2 := h.take("k")
		as := h.attempts(c1.ID)
		if len(as) != 2 || as[0].LeaseToken != c1.LeaseToken || as[1].LeaseToken != c2.LeaseToken ||
			as[0].Number != 1 || as[1].Number != 2 || as[1].Outcome != task.OutcomeRunning {
			t.Errorf("attempts = %+v, want attempt 1 ended, attempt 2 running", as)
		}
	},
	"TaskWithoutAttemptsHasNone": func(t *testing.T, h *harness) {
		c := h.enqueue(job("k"))[0]
		if as := h.attempts(c.ID); len(as) != 0 {
			t.Errorf("attempts = %+v, want none", as)
		}
	},
	"GetRunAndFindRunByKey": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Key: "k", Tasks: []task.NewTask{node("a")}})
		if got := h.run(r.ID); got.ID != r.ID || got.Key != "k" || got.Name != "r" {
			t.Errorf("get run = %+v, want %+v", got, r)
		}
		got, err := h.s.FindRun(h.ctx, "k")
		if err != nil || got.ID != r.ID {
			t.Errorf("find run = %+v (%v), want run %d", got, err, r.ID)
		}
	},
	"EdgesOfARun": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b"), node("c", "a", "b")}})
		byName := map[string]int64{}
		ts, _ := h.s.ListTasks(h.ctx, task.Filter{RunID: r.ID})
		for _, t := range ts {
			byName[t.Name] = t.ID
		}
		es, err := h.s.Edges(h.ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := []task.Edge{{From: byName["a"], To: byName["c"]}, {From: byName["b"], To: byName["c"]}}
		slices.SortFunc(es, func(x, y task.Edge) int { return int(x.From - y.From) })
		if !slices.Equal(es, want) {
			t.Errorf("edges %v, want %v", es, want)
		}
	},
	"RunWithoutEdgesHasNone": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a")}})
		if es, err := h.s.Edges(h.ctx, r.ID); err != nil || len(es) != 0 {
			t.Errorf("edges %v (%v), want none", es, err)
		}
	},
}
