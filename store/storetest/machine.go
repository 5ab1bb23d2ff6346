package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// machineTests check the optional store.Machines capability, when the
// driver has it.
var machineTests = map[string]func(*testing.T, *harness){
	"WritesAtItsVersionWithItsTasks": func(t *testing.T, h *harness) {
		ms := machines(h)
		then := func(state string, due time.Time) func([]task.Enqueued) (json.RawMessage, time.Time, error) {
			return func([]task.Enqueued) (json.RawMessage, time.Time, error) { return json.RawMessage(state), due, nil }
		}
		r1, ok, err := ms.WriteInstance(h.ctx, store.InstanceWrite{Machine: "pay", Key: "o-1", Then: then(`{"s":"created"}`, time.Time{})})
		if err != nil || !ok || r1.Version != 1 || string(r1.State) != `{"s":"created"}` {
			t.Fatalf("made %+v ok=%v err=%v", r1, ok, err)
		}
		if _, ok, _ := ms.WriteInstance(h.ctx, store.InstanceWrite{Machine: "pay", Key: "o-1", Then: then(`{}`, time.Time{})}); ok {
			t.Error("a second make of pay/o-1 was written")
		}
		var ids []int64
		r2, ok, err := ms.WriteInstance(h.ctx, store.InstanceWrite{Machine: "pay", Key: "o-1", Version: 1,
			Tasks: []task.NewTask{{Kind: "authorize", IdempotencyKey: "fsm:pay:o-1:1", ReturnExisting: true}},
			Then: func(enq []task.Enqueued) (json.RawMessage, time.Time, error) {
				ids = []int64{enq[0].ID}
				return json.RawMessage(fmt.Sprintf(`{"task":%d}`, enq[0].ID)), h.now(), nil
			}})
		if err != nil || !ok || r2.Version != 2 || r2.Due.IsZero() || len(ids) != 1 {
			t.Fatalf("wrote %+v ok=%v err=%v", r2, ok, err)
		}
		if _, ok, _ := ms.WriteInstance(h.ctx, store.InstanceWrite{Machine: "pay", Key: "o-1", Version: 1, Tasks: []task.NewTask{job("lost")}, Then: then(`{}`, time.Time{})}); ok {
			t.Error("a write at a stale version was written")
		}
		if ts := h.kindTasks("lost"); len(ts) != 0 {
			t.Errorf("a write that did not apply enqueued %d tasks", len(ts))
		}
		if ts := h.kindTasks("authorize"); len(ts) != 1 || ts[0].ID != ids[0] {
			t.Errorf("tasks of kind authorize: %+v, want the one enqueued", ts)
		}
		if _, err := ms.GetInstance(h.ctx, "pay", "none"); !errors.Is(err, task.ErrNotFound) {
			t.Errorf("get of no instance: %v", err)
		}
	},
	"ListsByMachineKeyAndDue": func(t *testing.T, h *harness) {
		ms := machines(h)
		now := h.now()
		for _, c := range []struct {
			m, k string
			due  time.Time
		}{{"a", "1", now.Add(-time.Minute)}, {"a", "2", time.Time{}}, {"a", "3", now.Add(time.Hour)}, {"b", "1", now.Add(-time.Minute)}} {
			if _, ok, err := ms.WriteInstance(h.ctx, store.InstanceWrite{Machine: c.m, Key: c.k,
				Then: func([]task.Enqueued) (json.RawMessage, time.Time, error) { return json.RawMessage(`{}`), c.due, nil }}); err != nil || !ok {
				t.Fatal(ok, err)
			}
		}
		keys := func(f store.InstanceFilter) string {
			rs, err := ms.Instances(h.ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, r := range rs {
				out = append(out, r.Machine+"/"+r.Key)
			}
			return fmt.Sprint(out)
		}
		for f, want := range map[*store.InstanceFilter]string{
			{}:                                      "[a/1 a/2 a/3 b/1]",
			{Machine: "a"}:                          "[a/1 a/2 a/3]",
			{Machine: "a", DueBy: now}:              "[a/1]",
			{DueBy: now}:                            "[a/1 b/1]",
			{Machine: "a", AfterKey: "1", Limit: 1}: "[a/2]",
		} {
			if got := keys(*f); got != want {
				t.Errorf("instances %+v: %s, want %s", *f, got, want)
			}
		}
	},
}

func machines(h *harness) store.Machines {
	h.t.Helper()
	ms, ok := h.s.(store.Machines)
	if !ok {
		h.t.Skipf("the store (%T) is not a store.Machines (optional)", h.s)
	}
	return ms
}
