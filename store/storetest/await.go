package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// awaitTests check the optional store.Awaiter capability: the results
// handlers set, and tasks that await others, woken in the transaction
// that ends the last of them.
var awaitTests = map[string]func(*testing.T, *harness){
	"SetResultIsFencedAndTheLastWins": func(t *testing.T, h *harness) {
		aw := awaiter(h)
		c := h.enqueueTake("r")
		if got := h.get(c.ID).Result; got != nil {
			t.Fatalf("a new task's result: %s, want none", got)
		}
		h.setResult(aw, c, `{"n":1}`)
		h.setResult(aw, c, `{"n":2}`)
		if err := aw.SetResult(h.ctx, c.ID, c.LeaseToken+1000, json.RawMessage(`3`)); !errors.Is(err, task.ErrLeaseLost) {
			t.Errorf("a result under another token: %v, want ErrLeaseLost", err)
		}
		for _, bad := range []string{``, `{`, `"` + strings.Repeat("x", task.MaxResult) + `"`} {
			if err := aw.SetResult(h.ctx, c.ID, c.LeaseToken, json.RawMessage(bad)); !errors.Is(err, task.ErrInvalid) {
				t.Errorf("a result of %d bytes %.10q: %v, want ErrInvalid", len(bad), bad, err)
			}
		}
		if got := h.get(c.ID).Result; string(got) != `{"n":2}` {
			t.Errorf("result %s, want the last set under the lease", got)
		}
		h.end(c, task.Success)
		if err := aw.SetResult(h.ctx, c.ID, c.LeaseToken, json.RawMessage(`4`)); !errors.Is(err, task.ErrLeaseLost) {
			t.Errorf("a result after the task ended: %v, want ErrLeaseLost", err)
		}
		if got := h.children(aw, c.ID, c.ID+1000); len(got) != 1 || got[0].State != task.Success || string(got[0].Result) != `{"n":2}` {
			t.Errorf("children: %+v, want the one task, SUCCESS with its result", got)
		}
	},
	"TheLastToEndWakesTheTaskThatAwaitsThem": func(t *testing.T, h *harness) {
		aw := awaiter(h)
		h.enqueue(job("a"), job("b"))
		p := h.enqueueTake("p")
		a, b := h.take("a"), h.take("b")
		if err := h.finish(awaitingTasks(p, h.now().Add(time.Hour), a.ID, b.ID))[0]; err != nil {
			t.Fatalf("finish awaiting tasks: %v", err)
		}
		if got := h.get(p.ID); got.State != task.Sensing || got.Snoozes != 0 || got.Attempt != 0 {
			t.Errorf("awaiting: %s, snoozes %d, attempt %d; want SENSING, no snooze counted, the attempt given back", got.State, got.Snoozes, got.Attempt)
		}
		h.setResult(aw, a, `"ok"`)
		h.end(a, task.Success) // a plain success
		h.wantDue(t, "p", false, "one of two awaited tasks ended")
		if err := h.finish(store.Finish{TaskID: b.ID, Token: b.LeaseToken, State: task.Failed, Error: "boom"})[0]; err != nil {
			t.Fatal(err)
		}
		h.wantDue(t, "p", true, "both awaited tasks ended")
		got := h.children(aw, b.ID, a.ID)
		if len(got) != 2 || got[0].ID != a.ID || string(got[0].Result) != `"ok"` || got[1].State != task.Failed || got[1].Error != "boom" {
			t.Errorf("children %+v, want a SUCCESS with its result and b FAILED with its error, by id", got)
		}
	},
	"AnAwaitOfTasksThatEndedIsDueAtOnce": func(t *testing.T, h *harness) {
		h.enqueue(job("a"))
		a := h.endKind("a", task.Success)
		p := h.enqueueTake("p")
		if err := h.finish(awaitingTasks(p, h.now().Add(time.Hour), a.ID, p.ID+1000))[0]; err != nil {
			t.Fatalf("finish awaiting tasks: %v", err)
		}
		h.wantDue(t, "p", true, "it awaits a task that ended and one that does not exist")
	},
	"ADeadLetterHasNotEnded": func(t *testing.T, h *harness) {
		h.enqueue(job("a"))
		p := h.enqueueTake("p")
		a := h.take("a")
		h.finish(awaitingTasks(p, h.now().Add(time.Hour), a.ID))
		h.end(a, task.DeadLetter)
		h.wantDue(t, "p", false, "its awaited task is a dead letter")
		if _, err := h.s.Act(h.ctx, a.ID, task.ActSkip); err != nil {
			t.Fatal(err)
		}
		h.wantDue(t, "p", true, "an operator skipped the dead letter it awaited")
	},
	"AnEndCountsOnce": func(t *testing.T, h *harness) {
		h.enqueue(job("a"), job("b"))
		p := h.enqueueTake("p")
		a, b := h.take("a"), h.take("b")
		h.finish(awaitingTasks(p, h.now().Add(time.Hour), a.ID, b.ID))
		h.end(a, task.Failed)
		if _, err := h.s.Act(h.ctx, a.ID, task.ActRetry); err != nil {
			t.Fatal(err)
		}
		h.endKind("a", task.Failed) // a ends a second time
		h.wantDue(t, "p", false, "one awaited task ended twice, the other not at all")
		h.end(b, task.Success)
		h.wantDue(t, "p", true, "both ended")
	},
	"AFencedAwaitRecordsNothing": func(t *testing.T, h *harness) {
		h.enqueue(job("a"))
		p := h.enqueueTake("p")
		a := h.take("a")
		f := awaitingTasks(p, h.now().Add(time.Hour), a.ID)
		f.Token += 1000
		if err := h.finish(f)[0]; !errors.Is(err, task.ErrLeaseLost) {
			t.Fatalf("an await under another token: %v, want ErrLeaseLost", err)
		}
		h.end(a, task.Success)
		if got := h.get(p.ID); got.State != task.Running {
			t.Errorf("the task whose await was fenced is %s, want RUNNING as it was", got.State)
		}
	},
	"OnlyASensingTaskAwaitsOthers": func(t *testing.T, h *harness) {
		p := h.enqueueTake("p")
		for _, f := range []store.Finish{
			{TaskID: p.ID, Token: p.LeaseToken, State: task.Retrying, AwaitTasks: []int64{p.ID + 1}},
			{TaskID: p.ID, Token: p.LeaseToken, State: task.Sensing, AwaitTasks: []int64{p.ID}},
			{TaskID: p.ID, Token: p.LeaseToken, State: task.Sensing, AwaitTasks: []int64{0}},
			{TaskID: p.ID, Token: p.LeaseToken, State: task.Sensing, AwaitTasks: []int64{p.ID + 1}, Awaits: "topic"},
		} {
			if err := h.finish(f)[0]; !errors.Is(err, task.ErrInvalid) {
				t.Errorf("%s awaiting %v (and %q): %v, want ErrInvalid", f.State, f.AwaitTasks, f.Awaits, err)
			}
		}
	},
	"CancellingATaskCancelsWhatItAwaits": func(t *testing.T, h *harness) {
		grand := h.enqueue(job("run"), job("wait"), job("done"), job("grand"))[3]
		p := h.enqueueTake("p")
		run, done, mid := h.take("run"), h.take("done"), h.take("wait")
		h.end(done, task.Success)
		h.finish(awaitingTasks(mid, h.now().Add(time.Hour), grand.ID))
		h.finish(awaitingTasks(p, h.now().Add(time.Hour), run.ID, mid.ID, done.ID))
		if _, err := h.s.Act(h.ctx, p.ID, task.ActCancel); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			id   int64
			want task.State
		}{{run.ID, task.Cancelled}, {mid.ID, task.Cancelled}, {grand.ID, task.Cancelled}, {done.ID, task.Success}} {
			if got := h.get(c.id).State; got != c.want {
				t.Errorf("task %d: %s, want %s", c.id, got, c.want)
			}
		}
		if err := h.finish(store.Finish{TaskID: run.ID, Token: run.LeaseToken, State: task.Success})[0]; !errors.Is(err, task.ErrLeaseLost) {
			t.Errorf("the attempt of a cancelled awaited task finished: %v, want ErrLeaseLost", err)
		}
	},
	"EndsThatRaceTheAwaitWakeItOnce": func(t *testing.T, h *harness) {
		for round := range 10 {
			kinds := []string{}
			for k := range 3 {
				kinds = append(kinds, fmt.Sprintf("c%d-%d", round, k))
				h.enqueue(job(kinds[k]))
			}
			parent := fmt.Sprintf("p%d", round)
			p := h.enqueueTake(parent)
			var kids []task.Task
			var ids []int64
			for _, k := range kinds {
				kids = append(kids, h.take(k))
				ids = append(ids, kids[len(kids)-1].ID)
			}
			var wg sync.WaitGroup
			errs := make(chan error, len(kids)+1)
			finish := func(f store.Finish) {
				defer wg.Done()
				got, err := h.s.Finish(h.ctx, []store.Finish{f})
				if err == nil {
					err = got[0]
				}
				errs <- err
			}
			wg.Add(len(kids) + 1)
			go finish(awaitingTasks(p, h.now().Add(time.Hour), ids...))
			for _, k := range kids {
				go finish(store.Finish{TaskID: k.ID, Token: k.LeaseToken, State: task.Success})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
			}
			h.wantDue(t, parent, true, fmt.Sprintf("round %d: its three awaited tasks ended as it began to await them", round))
		}
	},
}

func awaiter(h *harness) store.Awaiter {
	h.t.Helper()
	aw, ok := h.s.(store.Awaiter)
	if !ok {
		h.t.Skipf("the store (%T) is not a store.Awaiter (optional)", h.s)
	}
	return aw
}

// awaitingTasks ends c's attempt awaiting the tasks ids, or until until.
func awaitingTasks(c task.Task, until time.Time, ids ...int64) store.Finish {
	return store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Sensing, NextAt: until, Refund: true, AwaitTasks: ids,
		Attempt: task.Attempt{Outcome: task.OutcomeSnoozed}}
}

func (h *harness) setResult(aw store.Awaiter, c task.Task, result string) {
	h.t.Helper()
	if err := aw.SetResult(h.ctx, c.ID, c.LeaseToken, json.RawMessage(result)); err != nil {
		h.t.Fatalf("set the result of task %d: %v", c.ID, err)
	}
}

func (h *harness) children(aw store.Awaiter, ids ...int64) []task.Child {
	h.t.Helper()
	got, err := aw.Children(h.ctx, ids)
	if err != nil {
		h.t.Fatalf("children %v: %v", ids, err)
	}
	return got
}

// wantDue checks whether the one task of kind is due now, claiming it
// when it is.
func (h *harness) wantDue(t *testing.T, kind string, due bool, why string) {
	t.Helper()
	got := h.claim(store.ClaimRequest{Kinds: []string{kind}, Limit: 1})
	if due != (len(got) == 1) {
		t.Errorf("%s: the task that awaits them is due: %v, want %v", why, len(got) == 1, due)
	}
}
