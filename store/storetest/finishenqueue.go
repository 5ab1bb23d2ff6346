package storetest

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// The cases of Finish.Enqueue join the Finish group from a file of their
// own.
func init() {
	finishTests["EnqueueInsertsTasksWhenTheItemApplies"] = finishEnqueueApplies
	finishTests["EnqueueInsertsNothingWhenTheLeaseIsLost"] = finishEnqueueLost
	finishTests["EnqueueSkipsAKeyAlreadyHeld"] = finishEnqueueKeyHeld
	finishTests["EnqueueRefusesAnInvalidTask"] = finishEnqueueInvalid
}

// catchOf is the task a FAILED finish of t enqueues in these cases.
func catchOf(t task.Task) task.NewTask {
	args, _ := json.Marshal(map[string]any{"task": t.ID, "kind": t.Kind})
	return task.NewTask{Kind: "caught", Args: args, Queue: t.Queue, Tenant: t.Tenant,
		IdempotencyKey: fmt.Sprintf("catch:%d", t.ID)}
}

func failWith(t task.Task, enqueue ...task.NewTask) store.Finish {
	return store.Finish{TaskID: t.ID, Token: t.LeaseToken, State: task.Failed, Error: "boom",
		Attempt: task.Attempt{Outcome: task.OutcomeError, Error: "boom"}, Enqueue: enqueue}
}

func finishEnqueueApplies(t *testing.T, h *harness) {
	// One task in a run, one outside, in one batch: each enqueues its
	// task outside any run, READY, in the queue and tenant it names.
	h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("a")}})
	h.enqueue(task.NewTask{Kind: "b", Queue: "mail", Tenant: "acme"})
	a, b := h.take("a"), h.take("b")
	if errs := h.finish(failWith(a, catchOf(a)), failWith(b, catchOf(b))); errs[0] != nil || errs[1] != nil {
		t.Fatalf("finish: %v", errs)
	}
	got := h.kindTasks("caught")
	if len(got) != 2 {
		t.Fatalf("caught tasks = %+v, want 2", got)
	}
	for i, src := range []task.Task{a, b} {
		c, want := got[i], catchOf(src)
		if c.State != task.Ready || c.RunID != 0 || c.Queue != src.Queue || c.Tenant != src.Tenant ||
			c.IdempotencyKey != want.IdempotencyKey || !store.SameJSON(c.Args, want.Args) {
			t.Errorf("caught task for %d = %+v, want READY, no run, queue %q, tenant %q, key %q, args %s",
				src.ID, c, src.Queue, src.Tenant, want.IdempotencyKey, want.Args)
		}
	}
	if st := h.get(a.ID).State; st != task.Failed {
		t.Errorf("task a is %s, want FAILED", st)
	}
}

func finishEnqueueLost(t *testing.T, h *harness) {
	h.enqueue(job("k"))
	c := h.take("k")
	stale := c
	stale.LeaseToken++
	wantErr(t, h.finish(failWith(stale, catchOf(c)))[0], task.ErrLeaseLost)
	if got := h.kindTasks("caught"); len(got) != 0 {
		t.Errorf("a finish that did not apply enqueued %+v", got)
	}
}

func finishEnqueueKeyHeld(t *testing.T, h *harness) {
	// The key is held by other work: the finish applies all the same,
	// and nothing more is inserted.
	h.enqueue(job("k"))
	c := h.take("k")
	held := h.enqueue(task.NewTask{Kind: "other", IdempotencyKey: catchOf(c).IdempotencyKey})[0]
	if err := h.finish(failWith(c, catchOf(c), catchOf(c)))[0]; err != nil {
		t.Fatalf("finish: %v", err)
	}
	if got := h.kindTasks("caught"); len(got) != 0 {
		t.Errorf("enqueued %+v under a key task %d holds", got, held.ID)
	}
	if st := h.get(c.ID).State; st != task.Failed {
		t.Errorf("task is %s, want FAILED", st)
	}
}

func finishEnqueueInvalid(t *testing.T, h *harness) {
	h.enqueue(job("k"))
	c := h.take("k")
	wantErr(t, h.finish(failWith(c, task.NewTask{}))[0], task.ErrInvalid)
	if st := h.get(c.ID).State; st != task.Running {
		t.Errorf("task is %s after a refused finish, want RUNNING", st)
	}
}
