package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/store/sqlite/sqlitetest"
	"github.com/grit-run/grit/task"
)

// refusing opens a store of each driver, with what makes its database
// refuse the successes of a kind (a trigger that raises).
var refusing = map[string]func(t *testing.T) (store.Store, func(kind, msg string)){
	"SQLite": func(t *testing.T) (store.Store, func(kind, msg string)) {
		path := sqlitetest.Path(t)
		st, err := sqlite.Open(context.Background(), "sqlite:"+path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st, func(kind, msg string) { sqlitetest.Refuse(t, path, kind, msg) }
	},
	"PostgreSQL": func(t *testing.T) (store.Store, func(kind, msg string)) {
		schema := pgtest.NewSchema(t)
		return pgtest.OpenIn(t, schema), func(kind, msg string) { pgtest.Refuse(t, schema, kind, msg) }
	},
}

// finishCalls records the tasks of each Finish call the engine makes, and
// runs before, if set, before each.
type finishCalls struct {
	store.Store
	before func(fs []store.Finish)
	mu     sync.Mutex
	calls  [][]int64
}

func (s *finishCalls) Finish(ctx context.Context, fs []store.Finish) ([]error, error) {
	if s.before != nil {
		s.before(fs)
	}
	ids := make([]int64, len(fs))
	for i, f := range fs {
		ids[i] = f.TaskID
	}
	s.mu.Lock()
	s.calls = append(s.calls, ids)
	s.mu.Unlock()
	return s.Store.Finish(ctx, fs)
}

// TestARefusedResultIsHeldApart: on both stores, whose database refuses
// the successes of one kind, a refused result recorded in one batch with
// 30 results of another kind holds none of them back: they are recorded
// at once, and their policies' commit-error hooks are never asked; the
// refused result's own hook gets its own error (task.ErrRefused, naming
// its task). A Stop with a 3s deadline, while the refused result is still
// being tried, returns within it, abandoning it and saying so.
func TestARefusedResultIsHeldApart(t *testing.T) {
	t.Parallel()
	for name, open := range refusing {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, refuse := open(t)
			testRefusedApart(t, st, refuse)
		})
	}
}

func testRefusedApart(t *testing.T, st store.Store, refuse func(kind, msg string)) {
	const others = 30
	refuse("charge", "ledger closed")
	w := &finishCalls{Store: st}
	cfg := testConfig(w)
	cfg.Concurrency = 40
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var asked atomic.Int64 // the other kind's hook
	chargeErrs := make(chan error, 1000)
	otherPol := retry.Policy{MaxAttempts: 3, OnCommitError: func(a retry.Attempt, d retry.Decision) retry.Decision { asked.Add(1); return d }}
	chargePol := retry.Policy{MaxAttempts: 3, OnCommitError: func(a retry.Attempt, d retry.Decision) retry.Decision {
		chargeErrs <- a.Err
		return d // keep trying
	}}
	wait := func(ctx context.Context, _ *task.Task) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, h := range []Handler{{Kind: "first", Fn: func(context.Context, *task.Task) error { return nil }},
		{Kind: "charge", Policy: &chargePol, Fn: wait}, {Kind: "mail", Policy: &otherPol, Fn: wait}} {
		if err := e.Register(h); err != nil {
			t.Fatal(err)
		}
	}
	first := enqueue(t, st, task.NewTask{Kind: "first"})
	charge := enqueue(t, st, task.NewTask{Kind: "charge"})
	var mail []int64
	for range others {
		mail = append(mail, enqueue(t, st, task.NewTask{Kind: "mail"}).ID)
	}
	// The first result's call lets the others end, and waits until they
	// are all queued: the next call carries them all, the refused one
	// among them.
	var once sync.Once
	w.before = func(fs []store.Finish) {
		if !slices.ContainsFunc(fs, func(f store.Finish) bool { return f.TaskID == first.ID }) {
			return
		}
		once.Do(func() {
			close(release)
			poll.Wait(10*time.Second, func() bool { return len(e.finishes) >= others+1 })
		})
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkRecordedApart(t, st, w, charge.ID, mail)
	if n := asked.Load(); n != 0 {
		t.Errorf("the other kind's commit-error hook was asked %d times, want never", n)
	}
	checkOwnError(t, <-chargeErrs, charge.ID, "ledger closed")
	checkStopWithin(t, e, 3*time.Second, charge.ID)
	if got, _ := st.GetTask(context.Background(), charge.ID); got.State != task.Running || got.Attempt != 1 {
		t.Errorf("the refused task is %s at attempt %d after the stop, want RUNNING at 1 (its lease lapses)", got.State, got.Attempt)
	}
}

// checkRecordedApart checks that the tasks of mail are recorded within a
// few seconds, and that they shared a Finish call with the refused one.
func checkRecordedApart(t *testing.T, st store.Store, w *finishCalls, refused int64, mail []int64) {
	t.Helper()
	waitFor(t, 5*time.Second, func() bool {
		ts, err := st.ListTasks(context.Background(), task.Filter{IDs: mail, States: []task.State{task.Success}})
		return err == nil && len(ts) == len(mail)
	}, func() string { return fmt.Sprintf("the %d other tasks are not all SUCCESS", len(mail)) })
	w.mu.Lock()
	defer w.mu.Unlock()
	shared := slices.ContainsFunc(w.calls, func(ids []int64) bool {
		return slices.Contains(ids, refused) && !slices.ContainsFunc(mail, func(id int64) bool { return !slices.Contains(ids, id) })
	})
	if !shared {
		t.Errorf("no Finish call carried the refused result with the %d others: calls %v", len(mail), w.calls)
	}
}

// checkOwnError checks that err is task id's own refusal.
func checkOwnError(t *testing.T, err error, id int64, msg string) {
	t.Helper()
	if !errors.Is(err, task.ErrRefused) || !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), fmt.Sprintf("task %d ", id)) {
		t.Errorf("the refused task's hook got %v, want its own task.ErrRefused with %q", err, msg)
	}
}

// checkStopWithin stops e with a deadline d while the result of task id is
// still unrecorded: Stop returns within d and a second, with an error
// naming the task and wrapping the deadline.
func checkStopWithin(t *testing.T, e *Engine, d time.Duration, id int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	began := time.Now()
	err := e.Stop(ctx)
	if took := time.Since(began); took > d+time.Second {
		t.Errorf("Stop with a %v deadline returned after %v", d, took)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), fmt.Sprint(id)) || !strings.Contains(err.Error(), "1 result not recorded") {
		t.Errorf("Stop: %v, want the deadline, naming task %d as abandoned", err, id)
	}
}

// TestHeldResultsBoundTheClaims: a worker whose store refuses the
// successes of the only kind it works holds those results apart, but
// stops claiming once it holds twice its concurrency: while the held
// results are tried again and again, no more tasks are claimed.
func TestHeldResultsBoundTheClaims(t *testing.T) {
	t.Parallel()
	st, refuse := refusing["SQLite"](t)
	refuse("charge", "ledger closed")
	var asked atomic.Int64
	pol := retry.Policy{MaxAttempts: 3, OnCommitError: func(a retry.Attempt, d retry.Decision) retry.Decision { asked.Add(1); return d }}
	cfg := testConfig(st)
	cfg.Concurrency = 2
	for range 40 {
		enqueue(t, st, task.NewTask{Kind: "charge"})
	}
	e := start(t, cfg, Handler{Kind: "charge", Policy: &pol, Fn: func(context.Context, *task.Task) error { return nil }})
	waitFor(t, 10*time.Second, func() bool { return e.held.Load() >= 4 }, func() string { return fmt.Sprintf("%d results held, want 4", e.held.Load()) })
	ready := func() int {
		ts, err := st.ListTasks(context.Background(), task.Filter{States: []task.State{task.Ready}})
		if err != nil {
			t.Fatal(err)
		}
		return len(ts)
	}
	retried := func() { // every held result tried twice more: what was on its way is held by then
		tries := asked.Load()
		waitFor(t, 20*time.Second, func() bool { return asked.Load() >= tries+2*e.held.Load() }, func() string { return "the held results were not tried again" })
	}
	retried()
	before := ready()
	retried()
	if after := ready(); before == 0 || after != before {
		t.Errorf("%d tasks READY with %d results held, %d after they were tried twice more; want some, and no more claimed", before, e.held.Load(), after)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	e.Stop(ctx) // the held results are abandoned
}
