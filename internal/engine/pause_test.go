package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/store/sqlite/sqlitetest"
	"github.com/grit-run/grit/task"
)

// TestPauseStopsClaimsFleetWide: a paused queue's and a paused kind's
// tasks are not claimed, on either store, while the others run; they
// use no attempt; resumed, they run within a heartbeat.
func TestPauseStopsClaimsFleetWide(t *testing.T) {
	t.Parallel()
	for name, open := range bothStores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			p, ok := st.(store.Pauser)
			if !ok {
				t.Fatalf("%T keeps no pauses", st)
			}
			ctx := context.Background()
			for _, ps := range []store.Pause{{Scope: store.ScopeQueue, Name: "mail"}, {Scope: store.ScopeKind, Name: "charge"}} {
				if _, err := p.Pause(ctx, ps); err != nil {
					t.Fatal(err)
				}
			}
			var ran atomic.Int64
			fn := func(context.Context, *task.Task) error { ran.Add(1); return nil }
			var paused, free []int64
			for i := range 5 {
				paused = append(paused, enqueue(t, st, task.NewTask{Kind: "send", Queue: "mail"}).ID)
				paused = append(paused, enqueue(t, st, task.NewTask{Kind: "charge", Args: []byte(fmt.Sprintf(`{"n":%d}`, i))}).ID)
				free = append(free, enqueue(t, st, task.NewTask{Kind: "send"}).ID)
			}
			e := start(t, testConfig(st), Handler{Kind: "send", Fn: fn}, Handler{Kind: "charge", Fn: fn})
			for _, id := range free {
				waitState(t, st, id, task.Success)
			}
			// A few more rounds of the claim loop: the paused tasks are
			// still not taken.
			after, claims := e.Stats().Claimed.Load(), e.Stats().Claims.Load()
			waitFor(t, 10*time.Second, func() bool { return e.Stats().Claims.Load() >= claims+3 }, func() string { return "the claim loop to go round" })
			for _, id := range paused {
				got, err := st.GetTask(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if got.State != task.Ready || got.Attempt != 0 {
					t.Errorf("paused task %d (%s, queue %s) is %s at attempt %d, want READY and untouched", id, got.Kind, got.Queue, got.State, got.Attempt)
				}
			}
			if e.Stats().Claimed.Load() != after {
				t.Errorf("the engine claimed %d tasks while only paused ones were left", e.Stats().Claimed.Load()-after)
			}
			for _, ps := range []store.Pause{{Scope: store.ScopeQueue, Name: "mail"}, {Scope: store.ScopeKind, Name: "charge"}} {
				if _, err := p.Resume(ctx, ps.Scope, ps.Name); err != nil {
					t.Fatal(err)
				}
			}
			e.Wake()
			for _, id := range paused {
				if got := waitState(t, st, id, task.Success); got.Attempt != 1 {
					t.Errorf("task %d succeeded on attempt %d, want 1: the pause used none", id, got.Attempt)
				}
			}
		})
	}
}

// TestPauseMeansStop: two workers, each on a handle of its own, work a
// stream of short tasks of two queues; a third handle (as grit pause is
// another process) pauses one. Once Pause has returned, no attempt of the
// paused queue starts, by the store's clock, on either worker, while the
// other queue's tasks go on; those claimed before the pause and not begun
// are given back, using no attempt. On SQLite and on PostgreSQL.
func TestPauseMeansStop(t *testing.T) {
	t.Parallel()
	handles := map[string]func(*testing.T) [3]store.Store{
		"sqlite": func(t *testing.T) (hs [3]store.Store) {
			dsn := sqlitetest.DSN(t)
			for i := range hs {
				st, err := sqlite.Open(context.Background(), dsn)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				hs[i] = st
			}
			return hs
		},
		"postgres": func(t *testing.T) (hs [3]store.Store) {
			schema := pgtest.NewSchema(t)
			for i := range hs {
				hs[i] = pgtest.OpenIn(t, schema)
			}
			return hs
		},
	}
	for name, open := range handles {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			hs := open(t)
			op := hs[2]
			fn := func(context.Context, *task.Task) error { return nil }
			for i, st := range hs[:2] {
				cfg := testConfig(st)
				cfg.WorkerID = fmt.Sprintf("w%d", i+1)
				start(t, cfg, Handler{Kind: "work", Fn: fn})
			}
			s := streamTasks(t, op, "paused", "free")
			poll.Until(t, 30*time.Second, "tasks of both queues to succeed", func() bool {
				return s.succeeded(t, op, "paused") >= 20 && s.succeeded(t, op, "free") >= 20
			})
			ctx := context.Background()
			if _, err := op.(store.Pauser).Pause(ctx, store.Pause{Scope: store.ScopeQueue, Name: "paused", Who: "test"}); err != nil {
				t.Fatal(err)
			}
			returned, err := op.Now(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// The other queue goes on: the tasks enqueued well after the
			// pause (a few heartbeats) succeed.
			after := s.lastID("free")
			poll.Until(t, 30*time.Second, "the free queue's tasks enqueued after the pause to succeed", func() bool {
				return s.succeededAfter(t, op, "free", after) >= 50
			})
			s.stop()
			ts, err := op.ListTasks(ctx, task.Filter{Queue: "paused"})
			if err != nil {
				t.Fatal(err)
			}
			ran, waits, late := 0, 0, 0
			for _, tk := range ts {
				waits += tk.Waits
				as, err := op.Attempts(ctx, tk.ID)
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range as {
					ran++
					if a.StartedAt.After(returned) {
						late++
						t.Errorf("task %d of the paused queue: attempt %d started at %s by %s, after Pause returned at %s",
							tk.ID, a.Number, a.StartedAt.Format(time.RFC3339Nano), a.Worker, returned.Format(time.RFC3339Nano))
					}
				}
				if tk.State == task.Running {
					t.Errorf("task %d of the paused queue is RUNNING after the pause", tk.ID)
				}
			}
			t.Logf("paused queue: %d tasks, %d attempts all started before the pause returned (%d after), %d claims given back unstarted",
				len(ts), ran, late, waits)
		})
	}
}

// stream enqueues, every 2ms, one task in each of its queues, until stop.
type stream struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	last   map[string]int64 // the newest task of each queue
}

func streamTasks(t *testing.T, st store.Store, queues ...string) *stream {
	ctx, cancel := context.WithCancel(context.Background())
	s := &stream{cancel: cancel, done: make(chan struct{}), last: map[string]int64{}}
	t.Cleanup(s.stop)
	tick := time.NewTicker(2 * time.Millisecond)
	go func() {
		defer close(s.done)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for _, q := range queues {
				got, err := st.Enqueue(ctx, []task.NewTask{{Kind: "work", Queue: q}})
				if err != nil {
					return // the test ended
				}
				s.mu.Lock()
				s.last[q] = got[0].Task.ID
				s.mu.Unlock()
			}
		}
	}()
	return s
}

func (s *stream) stop() { s.cancel(); <-s.done }

func (s *stream) lastID(queue string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last[queue]
}

func (s *stream) succeeded(t *testing.T, st store.Store, queue string) int {
	return s.succeededAfter(t, st, queue, 0)
}

// succeededAfter counts the tasks of queue after task id that succeeded.
func (s *stream) succeededAfter(t *testing.T, st store.Store, queue string, id int64) int {
	t.Helper()
	ts, err := st.ListTasks(context.Background(), task.Filter{Queue: queue, States: []task.State{task.Success}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tk := range ts {
		if tk.ID > id {
			n++
		}
	}
	return n
}
