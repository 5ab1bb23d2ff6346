package storetest

import (
	"context"
	"errors"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// testTimeout bounds every subtest, so a broken driver fails instead of
// hanging.
const testTimeout = time.Minute

// lease is long enough never to expire during a test that does not wait for
// it.
const lease = 10 * time.Minute

// shortLease is the lease of tests that wait for one to expire.
const shortLease = 50 * time.Millisecond

// harness is one subtest's store with helpers that fail the test on any
// unexpected error.
type harness struct {
	t   *testing.T
	s   store.Store
	ctx context.Context
	// reopen opens another handle on s's database, when the driver
	// promises wakes across handles (WakesAcrossHandles); else nil.
	reopen func(t *testing.T, s store.Store) store.Store
	// cancelsCross: the driver promises cancels across handles too
	// (CancelsAcrossHandles).
	cancelsCross bool
	// refuse makes s refuse the successes of a kind (RefusesSuccesses).
	refuse func(t *testing.T, s store.Store, kind string)
}

func newHarness(t *testing.T, open func(t *testing.T) store.Store, o options) *harness {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	s := open(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return &harness{t: t, s: s, ctx: ctx, reopen: o.reopen, cancelsCross: o.cancelsCross, refuse: o.refuse}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (h *harness) now() time.Time {
	h.t.Helper()
	now, err := h.s.Now(h.ctx)
	if err != nil {
		h.t.Fatalf("now: %v", err)
	}
	return now
}

// waitPast polls the store's clock until it is after tm.
func (h *harness) waitPast(tm time.Time) {
	h.t.Helper()
	for !h.now().After(tm) {
		select {
		case <-h.ctx.Done():
			h.t.Fatalf("store clock never passed %v", tm)
		case <-time.After(2 * time.Millisecond):
		}
	}
}

func (h *harness) enqueue(ts ...task.NewTask) []task.Task {
	h.t.Helper()
	got, err := h.s.Enqueue(h.ctx, ts)
	if err != nil {
		h.t.Fatalf("enqueue: %v", err)
	}
	if len(got) != len(ts) {
		h.t.Fatalf("enqueue %d tasks: got %d back", len(ts), len(got))
	}
	return store.Tasks(got)
}

func (h *harness) submit(r task.NewRun) task.Run {
	h.t.Helper()
	run, err := h.s.SubmitRun(h.ctx, r)
	if err != nil {
		h.t.Fatalf("submit run: %v", err)
	}
	return run
}

// node is a task of a run whose kind is its name, so that take can claim it
// alone.
func node(name string, needs ...string) task.NewTask {
	return task.NewTask{Name: name, Kind: name, Needs: needs}
}

// job is a task outside runs.
func job(kind string) task.NewTask { return task.NewTask{Kind: kind} }

func (h *harness) claim(req store.ClaimRequest) []task.Task {
	h.t.Helper()
	if req.Worker == "" {
		req.Worker = "w1"
	}
	if req.Lease == 0 {
		req.Lease = lease
	}
	got, err := h.s.Claim(h.ctx, req)
	if err != nil {
		h.t.Fatalf("claim: %v", err)
	}
	return got
}

// take claims the one due task of a kind.
func (h *harness) take(kind string) task.Task {
	h.t.Helper()
	got := h.claim(store.ClaimRequest{Kinds: []string{kind}, Limit: 2})
	if len(got) != 1 {
		h.t.Fatalf("claim kind %q: got %d tasks, want 1", kind, len(got))
	}
	return got[0]
}

func (h *harness) finish(fs ...store.Finish) []error {
	h.t.Helper()
	errs, err := h.s.Finish(h.ctx, fs)
	if err != nil {
		h.t.Fatalf("finish: %v", err)
	}
	if len(errs) != len(fs) {
		h.t.Fatalf("finish %d items: got %d errors", len(fs), len(errs))
	}
	return errs
}

// end finishes a claimed task in a state.
func (h *harness) end(t task.Task, state task.State) {
	h.t.Helper()
	if err := h.finish(store.Finish{TaskID: t.ID, Token: t.LeaseToken, State: state})[0]; err != nil {
		h.t.Fatalf("finish task %d as %s: %v", t.ID, state, err)
	}
}

// endKind claims the one due task of a kind and finishes it in a state.
func (h *harness) endKind(kind string, state task.State) task.Task {
	h.t.Helper()
	t := h.take(kind)
	h.end(t, state)
	return t
}

func (h *harness) get(id int64) task.Task {
	h.t.Helper()
	t, err := h.s.GetTask(h.ctx, id)
	if err != nil {
		h.t.Fatalf("get task %d: %v", id, err)
	}
	return t
}

func (h *harness) run(id int64) task.Run {
	h.t.Helper()
	r, err := h.s.GetRun(h.ctx, id)
	if err != nil {
		h.t.Fatalf("get run %d: %v", id, err)
	}
	return r
}

func (h *harness) attempts(id int64) []task.Attempt {
	h.t.Helper()
	as, err := h.s.Attempts(h.ctx, id)
	if err != nil {
		h.t.Fatalf("attempts of task %d: %v", id, err)
	}
	return as
}

// states returns the states of a run's tasks by name.
func (h *harness) states(runID int64) map[string]task.State {
	h.t.Helper()
	ts, err := h.s.ListTasks(h.ctx, task.Filter{RunID: runID})
	if err != nil {
		h.t.Fatalf("list tasks of run %d: %v", runID, err)
	}
	m := make(map[string]task.State, len(ts))
	for _, t := range ts {
		m[t.Name] = t.State
	}
	return m
}

// wantStates checks the states of some of a run's tasks.
func (h *harness) wantStates(runID int64, want map[string]task.State) {
	h.t.Helper()
	got := h.states(runID)
	for name, w := range want {
		if got[name] != w {
			h.t.Errorf("task %q is %s, want %s", name, got[name], w)
		}
	}
}

func (h *harness) wantRunState(runID int64, want task.State) task.Run {
	h.t.Helper()
	r := h.run(runID)
	if r.State != want {
		h.t.Errorf("run %d is %s, want %s", runID, r.State, want)
	}
	return r
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("error %v, want one matching %v", err, target)
	}
}

// near reports whether two times are the same to the millisecond, whatever
// precision a driver keeps.
func near(a, b time.Time) bool {
	d := a.Sub(b)
	return -time.Millisecond < d && d < time.Millisecond
}

func ids(ts []task.Task) []int64 {
	out := make([]int64, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

func sortedIDs(ts []task.Task) []int64 {
	out := ids(ts)
	slices.Sort(out)
	return out
}
