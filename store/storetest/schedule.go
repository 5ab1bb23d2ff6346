package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// scheduleTests check the optional store.Scheduler capability, when the
// driver has it.
var scheduleTests = map[string]func(*testing.T, *harness){
	"MakesOnceThenWritesAtItsVersion": func(t *testing.T, h *harness) {
		sc := scheduler(h)
		due := h.now().Add(time.Minute).Truncate(time.Second)
		r1, ok := h.writeSchedule(sc, store.ScheduleWrite{Name: "a", Def: json.RawMessage(`{"x":1}`), Then: stateIs(`{"n":1}`, due)})
		if !ok || r1.Version != 1 || string(r1.Def) != `{"x":1}` || string(r1.State) != `{"n":1}` || !r1.Due.Equal(due) {
			t.Fatalf("made %+v ok=%v, want version 1, its def, state and due", r1, ok)
		}
		if _, ok := h.writeSchedule(sc, store.ScheduleWrite{Name: "a", Def: json.RawMessage(`{"x":2}`), Then: stateIs(`{}`, due)}); ok {
			t.Error("a second make of schedule a was written")
		}
		r2, ok := h.writeSchedule(sc, store.ScheduleWrite{Name: "a", Version: 1, Then: stateIs(`{"n":2}`, time.Time{})})
		if !ok || r2.Version != 2 || string(r2.Def) != `{"x":1}` || string(r2.State) != `{"n":2}` || !r2.Due.IsZero() {
			t.Fatalf("wrote %+v ok=%v, want version 2, the def kept, the new state, no due", r2, ok)
		}
		if _, ok := h.writeSchedule(sc, store.ScheduleWrite{Name: "a", Version: 1, Then: stateIs(`{"n":3}`, due)}); ok {
			t.Error("a write at version 1 was written over version 2")
		}
		got, err := sc.GetSchedule(h.ctx, "a")
		if err != nil || got.Version != 2 || string(got.State) != `{"n":2}` {
			t.Errorf("get: %+v, %v; want version 2", got, err)
		}
		r3, ok := h.writeSchedule(sc, store.ScheduleWrite{Name: "a", Version: 2, Def: json.RawMessage(`{"x":3}`), Then: stateIs(`{}`, due)})
		if !ok || string(r3.Def) != `{"x":3}` {
			t.Errorf("a new def: %+v ok=%v", r3, ok)
		}
		if _, err := sc.GetSchedule(h.ctx, "none"); !errors.Is(err, task.ErrNotFound) {
			t.Errorf("get of no schedule: %v, want ErrNotFound", err)
		}
	},
	"EnqueuesItsTasksInTheSameTransaction": func(t *testing.T, h *harness) {
		sc := scheduler(h)
		slot := func(n int) task.NewTask {
			return task.NewTask{Kind: "tick", IdempotencyKey: fmt.Sprintf("schedule:a@%d", n), ReturnExisting: true}
		}
		var seen []task.Enqueued
		r, ok := h.writeSchedule(sc, store.ScheduleWrite{Name: "a", Def: json.RawMessage(`{}`), Tasks: []task.NewTask{slot(1), slot(2)},
			Then: func(enq []task.Enqueued) (json.RawMessage, time.Time, error) {
				seen = enq
				return json.RawMessage(fmt.Sprintf(`{"ids":[%d,%d]}`, enq[0].ID, enq[1].ID)), time.Time{}, nil
			}})
		if !ok || len(seen) != 2 || seen[0].ID == 0 || seen[0].ID == seen[1].ID || seen[0].Existed {
			t.Fatalf("write ok=%v, Then saw %+v: want two new tasks", ok, seen)
		}
		if want := fmt.Sprintf(`{"ids":[%d,%d]}`, seen[0].ID, seen[1].ID); string(r.State) != want {
			t.Errorf("state %s, want %s", r.State, want)
		}
		// A slot enqueued again is the task that holds its key.
		_, ok = h.writeSchedule(sc, store.ScheduleWrite{Name: "a", Version: r.Version, Tasks: []task.NewTask{slot(2), slot(3)},
			Then: func(enq []task.Enqueued) (json.RawMessage, time.Time, error) {
				seen = enq
				return json.RawMessage(`{}`), time.Time{}, nil
			}})
		if !ok || !seen[0].Existed || seen[1].Existed {
			t.Errorf("slots 2 and 3 again: %+v, want slot 2 to exist and 3 to be new", seen)
		}
		if ts := h.kindTasks("tick"); len(ts) != 3 {
			t.Errorf("%d tasks of kind tick, want 3 (one per slot)", len(ts))
		}
	},
	"WritesNothingWhenThenFailsOrAnotherWroteFirst": func(t *testing.T, h *harness) {
		sc := scheduler(h)
		r, _ := h.writeSchedule(sc, store.ScheduleWrite{Name: "a", Def: json.RawMessage(`{}`), Then: stateIs(`{}`, time.Time{})})
		boom := errors.New("boom")
		_, ok, err := sc.WriteSchedule(h.ctx, store.ScheduleWrite{Name: "a", Version: r.Version, Tasks: []task.NewTask{job("lost")},
			Then: func([]task.Enqueued) (json.RawMessage, time.Time, error) { return nil, time.Time{}, boom }})
		if ok || !errors.Is(err, boom) {
			t.Errorf("a write whose Then failed: ok=%v err=%v, want not ok and its error", ok, err)
		}
		_, ok = h.writeSchedule(sc, store.ScheduleWrite{Name: "a", Version: r.Version + 5, Tasks: []task.NewTask{job("lost")}, Then: stateIs(`{}`, time.Time{})})
		if ok {
			t.Error("a write at a version never read was written")
		}
		if ts := h.kindTasks("lost"); len(ts) != 0 {
			t.Errorf("writes that did not apply enqueued %d tasks", len(ts))
		}
		if got, _ := sc.GetSchedule(h.ctx, "a"); got.Version != r.Version {
			t.Errorf("version %d after writes that did not apply, want %d", got.Version, r.Version)
		}
	},
	"OneOfManyWritersAtAVersionWins": func(t *testing.T, h *harness) {
		sc := scheduler(h)
		r, _ := h.writeSchedule(sc, store.ScheduleWrite{Name: "a", Def: json.RawMessage(`{}`), Then: stateIs(`{}`, time.Time{})})
		const writers = 8
		var wg sync.WaitGroup
		wins := make(chan int, writers)
		for i := range writers {
			wg.Go(func() {
				nt := task.NewTask{Kind: "race", IdempotencyKey: fmt.Sprintf("race-%d", i)}
				_, ok, err := sc.WriteSchedule(h.ctx, store.ScheduleWrite{Name: "a", Version: r.Version, Tasks: []task.NewTask{nt}, Then: stateIs(`{}`, time.Time{})})
				if err != nil {
					t.Errorf("writer %d: %v", i, err)
				}
				if ok {
					wins <- i
				}
			})
		}
		wg.Wait()
		close(wins)
		if n := len(wins); n != 1 {
			t.Errorf("%d writers at one version won, want 1", n)
		}
		if ts := h.kindTasks("race"); len(ts) != 1 {
			t.Errorf("%d tasks enqueued by the writers, want the winner's 1", len(ts))
		}
	},
	"ListsThoseDueAndDeletes": func(t *testing.T, h *harness) {
		sc := scheduler(h)
		now := h.now().Truncate(time.Second)
		for name, due := range map[string]time.Time{"past": now.Add(-time.Minute), "future": now.Add(time.Hour), "paused": {}} {
			h.writeSchedule(sc, store.ScheduleWrite{Name: name, Def: json.RawMessage(`{}`), Then: stateIs(`{}`, due)})
		}
		names := func(dueBy time.Time) []string {
			rs, err := sc.Schedules(h.ctx, dueBy)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, r := range rs {
				out = append(out, r.Name)
			}
			return out
		}
		if got := fmt.Sprint(names(time.Time{})); got != "[future past paused]" {
			t.Errorf("all schedules: %s, want them by name", got)
		}
		if got := fmt.Sprint(names(now)); got != "[past]" {
			t.Errorf("due now: %s, want [past]", got)
		}
		if ok, err := sc.DeleteSchedule(h.ctx, "past"); !ok || err != nil {
			t.Errorf("delete: %v %v", ok, err)
		}
		if ok, err := sc.DeleteSchedule(h.ctx, "past"); ok || err != nil {
			t.Errorf("delete again: %v %v, want false", ok, err)
		}
		if got := fmt.Sprint(names(now)); got != "[]" {
			t.Errorf("due after the delete: %s", got)
		}
	},
}

// stateIs is a Then that writes state and due whatever was enqueued.
func stateIs(state string, due time.Time) func([]task.Enqueued) (json.RawMessage, time.Time, error) {
	return func([]task.Enqueued) (json.RawMessage, time.Time, error) { return json.RawMessage(state), due, nil }
}

func scheduler(h *harness) store.Scheduler {
	h.t.Helper()
	sc, ok := h.s.(store.Scheduler)
	if !ok {
		h.t.Skipf("the store (%T) is not a store.Scheduler (optional)", h.s)
	}
	return sc
}

func (h *harness) writeSchedule(sc store.Scheduler, w store.ScheduleWrite) (store.ScheduleRow, bool) {
	h.t.Helper()
	r, ok, err := sc.WriteSchedule(h.ctx, w)
	if err != nil {
		h.t.Fatalf("write schedule %q: %v", w.Name, err)
	}
	return r, ok
}
