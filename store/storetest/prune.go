package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/retention"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// soon is the keep of rules that let a task go as soon as the store's
// clock has moved past its end: the cases wait for that (h.aged), not
// for a retention of seconds.
const soon = time.Millisecond

// finishedStates are the states that rules may name.
var finishedStates = []task.State{task.Success, task.Failed, task.UpstreamFailed, task.Skipped, task.Cancelled}

// keepAll is a rule for every finished state, in every queue.
func keepAll(keep time.Duration) []retention.Rule {
	var rs []retention.Rule
	for _, s := range finishedStates {
		rs = append(rs, retention.Rule{State: s, Keep: keep})
	}
	return rs
}

// pruneTests check store.Pruner, the deletes of retention.
var pruneTests = map[string]func(*testing.T, *harness){
	"DeletesFinishedTasksWithTheirAttemptsAndNothingElse": func(t *testing.T, h *harness) {
		p := h.s
		h.enqueue(job("ok"), job("bad"), job("dead"), job("busy"), job("later"))
		ok := h.endKind("ok", task.Success)
		c := h.take("bad")
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Failed, Error: "boom",
			Attempt: task.Attempt{Outcome: task.OutcomeError, Error: "boom"}})
		dead := h.endKind("dead", task.DeadLetter)
		busy := h.take("busy")
		open := h.submit(task.NewRun{Name: "open", Tasks: []task.NewTask{node("first"), node("second", "first")}})
		first := h.endKind("first", task.Success)
		h.aged(ok.ID, c.ID, dead.ID, first.ID)

		got := h.prune(p, store.PruneRequest{Rules: keepAll(soon), Limit: 100})
		if got.Tasks != 2 || got.Attempts < 1 || got.Runs != 0 || got.Workers != 0 {
			t.Errorf("prune returned %+v, want 2 tasks (the success and the failure), the failure's attempt at least, no run, no worker", got)
		}
		h.wantGone(ok.ID, c.ID)
		if as, err := h.s.Attempts(h.ctx, c.ID); err == nil && len(as) > 0 {
			t.Errorf("the pruned failure's attempts are still there: %+v", as)
		}
		for _, id := range []int64{dead.ID, busy.ID, first.ID} {
			h.get(id)
		}
		h.wantStates(open.ID, map[string]task.State{"first": task.Success, "second": task.Ready})
		if ts := h.kindTasks("later"); len(ts) != 1 {
			t.Errorf("READY tasks of kind later: %d, want the 1 enqueued", len(ts))
		}
		h.wantRunState(open.ID, task.Running)
	},
	"RunGoesWithItsLastTask": func(t *testing.T, h *harness) {
		p := h.s
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a"), node("b", "a")}})
		a := h.endKind("a", task.Success)
		b := h.endKind("b", task.Success)
		h.wantRunState(r.ID, task.Success)
		if pruned := h.runPruned(p, r.ID); pruned {
			t.Errorf("run %d pruned before any round, want false: it is there", r.ID)
		}
		h.aged(a.ID, b.ID)
		got := h.prune(p, store.PruneRequest{Rules: keepAll(soon), Limit: 10})
		if got.Tasks != 2 || got.Runs != 1 {
			t.Errorf("prune returned %+v, want the run's 2 tasks and the run", got)
		}
		if _, err := h.s.GetRun(h.ctx, r.ID); !errors.Is(err, task.ErrNotFound) {
			t.Errorf("get run %d after its last task went: %v, want not found", r.ID, err)
		}
		if es, err := h.s.Edges(h.ctx, r.ID); err == nil && len(es) > 0 {
			t.Errorf("edges of the pruned run: %+v, want none", es)
		}
		if !h.runPruned(p, r.ID) {
			t.Errorf("run %d pruned: false, want true", r.ID)
		}
		if h.runPruned(p, r.ID+1000) || h.runPruned(p, 0) {
			t.Errorf("an id never handed out reported pruned, want false")
		}
		// A run made after the pruned one has an id of its own.
		if next := h.submit(task.NewRun{Name: "next"}); next.ID <= r.ID {
			t.Errorf("run made after pruning run %d got id %d, want a larger one: ids are never reused", r.ID, next.ID)
		}
	},
	"QueueRulesWinAndStatesWithoutRulesStay": func(t *testing.T, h *harness) {
		p := h.s
		h.enqueue(task.NewTask{Kind: "s1", Queue: "keep"}, task.NewTask{Kind: "s2", Queue: "go"},
			task.NewTask{Kind: "f1", Queue: "keep"}, task.NewTask{Kind: "f2", Queue: "go"},
			task.NewTask{Kind: "c1", Queue: "go"})
		s1, s2 := h.endKind("s1", task.Success), h.endKind("s2", task.Success)
		f1, f2 := h.endKind("f1", task.Failed), h.endKind("f2", task.Failed)
		c1 := h.take("c1")
		h.act(c1.ID, task.ActCancel)
		h.aged(s1.ID, s2.ID, f1.ID, f2.ID, c1.ID)
		got := h.prune(p, store.PruneRequest{Limit: 100, Rules: []retention.Rule{
			{State: task.Success, Keep: soon}, {Queue: "keep", State: task.Success, Keep: time.Hour},
			{Queue: "go", State: task.Failed, Keep: soon}, {State: task.Failed, Keep: time.Hour},
		}})
		if got.Tasks != 2 {
			t.Errorf("prune returned %+v, want 2 tasks: the success and the failure of queue go", got)
		}
		h.wantGone(s2.ID, f2.ID)
		for _, id := range []int64{s1.ID, f1.ID, c1.ID} {
			h.get(id)
		}
	},
	"LimitBoundsARoundOldestFirst": func(t *testing.T, h *harness) {
		p := h.s
		var ended []int64
		for _, k := range []string{"a", "b", "c", "d", "e"} {
			h.enqueue(job(k))
			tk := h.endKind(k, task.Success)
			h.waitPast(h.get(tk.ID).FinishedAt)
			ended = append(ended, tk.ID)
		}
		h.aged(ended...)
		if got := h.prune(p, store.PruneRequest{Rules: keepAll(soon), Limit: 2}); got.Tasks != 2 {
			t.Fatalf("round of limit 2 deleted %d tasks, want 2", got.Tasks)
		}
		h.wantGone(ended[:2]...)
		for _, id := range ended[2:] {
			h.get(id)
		}
		if got := h.prune(p, store.PruneRequest{Rules: keepAll(soon), Limit: 10}); got.Tasks != 3 {
			t.Errorf("round of limit 10 deleted %d tasks, want the 3 left", got.Tasks)
		}
	},
	"RoundsAtOnceDeleteDisjointSets": func(t *testing.T, h *harness) {
		p := h.s
		// Half the tasks are one run's, so that rounds at once delete
		// some of its last tasks each, and one of them must see it empty.
		const n, limit, rounds = 40, 7, 4
		var nodes []task.NewTask
		for i := range n / 2 {
			nodes = append(nodes, node(fmt.Sprint("n", i)))
			h.enqueue(job("x"))
		}
		r := h.submit(task.NewRun{Name: "wide", Tasks: nodes})
		var ended []int64
		for _, c := range h.claim(store.ClaimRequest{Limit: n}) {
			h.end(c, task.Success)
			ended = append(ended, c.ID)
		}
		if len(ended) != n {
			t.Fatalf("claimed %d tasks, want %d", len(ended), n)
		}
		h.aged(ended...)
		var mu sync.Mutex
		total, runs := 0, 0
		var wg sync.WaitGroup
		for range rounds {
			wg.Go(func() {
				for {
					got, err := p.Prune(h.ctx, store.PruneRequest{Rules: keepAll(soon), Limit: limit})
					if err != nil {
						t.Errorf("a round among %d at once: %v, want none to fail", rounds, err)
						return
					}
					if got.Tasks > limit {
						t.Errorf("a round deleted %d tasks, over its limit of %d", got.Tasks, limit)
					}
					mu.Lock()
					total, runs = total+got.Tasks, runs+got.Runs
					mu.Unlock()
					if got.Tasks == 0 {
						return
					}
				}
			})
		}
		wg.Wait()
		if total != n || runs != 1 {
			t.Errorf("rounds at once counted %d deleted tasks and %d runs in all, want %d and 1: each once", total, runs, n)
		}
		h.wantGone(ended...)
		if _, err := h.s.GetRun(h.ctx, r.ID); !errors.Is(err, task.ErrNotFound) {
			t.Errorf("get run %d after rounds at once deleted its tasks: %v, want not found", r.ID, err)
		}
	},
	"DeadWorkersGoActiveStay": func(t *testing.T, h *harness) {
		p := h.s
		const idle = 300 * time.Millisecond
		for _, id := range []string{"gone", "stopped"} {
			if err := h.s.RegisterWorker(h.ctx, task.Worker{ID: id}); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.s.DeactivateWorker(h.ctx, "stopped"); err != nil {
			t.Fatal(err)
		}
		h.enqueue(job("held"))
		h.claim(store.ClaimRequest{Worker: "holder", Kinds: []string{"held"}, Limit: 1})
		if err := h.s.RegisterWorker(h.ctx, task.Worker{ID: "holder"}); err != nil {
			t.Fatal(err)
		}
		h.waitPast(h.now().Add(idle))
		if err := h.s.RegisterWorker(h.ctx, task.Worker{ID: "alive"}); err != nil {
			t.Fatal(err)
		}
		if got := h.prune(p, store.PruneRequest{Limit: 1}); got.Workers != 0 || len(h.workers()) != 4 {
			t.Errorf("round without Workers deleted %d workers, want none", got.Workers)
		}
		got := h.prune(p, store.PruneRequest{Limit: 1, Workers: idle})
		var left []string
		for _, w := range h.workers() {
			left = append(left, w.ID)
		}
		if got.Workers != 2 || !slices.Equal(left, []string{"alive", "holder"}) {
			t.Errorf("prune deleted %d workers and left %v, want 2 gone and alive and holder (it holds a RUNNING task) left", got.Workers, left)
		}
	},
	"RefusesABadRequest": func(t *testing.T, h *harness) {
		p := h.s
		for _, req := range []store.PruneRequest{
			{Limit: 0},
			{Limit: 1, Rules: []retention.Rule{{State: task.DeadLetter, Keep: time.Hour}}},
			{Limit: 1, Rules: []retention.Rule{{State: task.Ready, Keep: time.Hour}}},
			{Limit: 1, Rules: []retention.Rule{{State: task.Success}}},
			{Limit: 1, Workers: -time.Second},
		} {
			_, err := p.Prune(h.ctx, req)
			wantErr(t, err, task.ErrInvalid)
		}
	},
}

func (h *harness) prune(p store.Pruner, req store.PruneRequest) store.PruneResult {
	h.t.Helper()
	got, err := p.Prune(h.ctx, req)
	if err != nil {
		h.t.Fatalf("prune: %v", err)
	}
	return got
}

func (h *harness) runPruned(p store.Pruner, id int64) bool {
	h.t.Helper()
	pruned, err := p.RunPruned(h.ctx, id)
	if err != nil {
		h.t.Fatalf("run %d pruned: %v", id, err)
	}
	return pruned
}

// aged waits until the store's clock is past the end of every task given
// by more than soon, so that rules keeping them for soon let them go.
func (h *harness) aged(ids ...int64) {
	h.t.Helper()
	var last time.Time
	for _, id := range ids {
		if f := h.get(id).FinishedAt; f.After(last) {
			last = f
		}
	}
	h.waitPast(last.Add(2 * soon))
}

func (h *harness) wantGone(ids ...int64) {
	h.t.Helper()
	for _, id := range ids {
		if _, err := h.s.GetTask(h.ctx, id); !errors.Is(err, task.ErrNotFound) {
			h.t.Errorf("get task %d after pruning: %v, want not found", id, err)
		}
	}
}

func (h *harness) kindTasks(kind string) []task.Task {
	h.t.Helper()
	ts, err := h.s.ListTasks(h.ctx, task.Filter{Kind: kind})
	if err != nil {
		h.t.Fatalf("list tasks of kind %s: %v", kind, err)
	}
	return ts
}
