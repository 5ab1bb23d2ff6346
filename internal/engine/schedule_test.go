package engine

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// threeHandles opens a store three times on one database, as three
// workers on three machines would.
var threeHandles = map[string]func(t *testing.T) []store.Store{
	"sqlite": func(t *testing.T) []store.Store {
		path := "sqlite:" + filepath.Join(t.TempDir(), "grit.db")
		var out []store.Store
		for range 3 {
			st, err := sqlite.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			out = append(out, st)
		}
		return out
	},
	"postgres": func(t *testing.T) []store.Store {
		schema := pgtest.NewSchema(t)
		return []store.Store{pgtest.OpenIn(t, schema), pgtest.OpenIn(t, schema), pgtest.OpenIn(t, schema)}
	},
}

// TestScheduleEverySecondOnThreeWorkers: three workers that each declare a
// schedule of every second (overlap allow), for ten seconds, run one task
// per slot, each once, with no slot left out between the first and the
// last.
func TestScheduleEverySecondOnThreeWorkers(t *testing.T) {
	t.Parallel()
	for name, open := range threeHandles {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sts := open(t)
			// allow: under load a slot may come while the last one's task
			// has not finished, which skip (the default) would drop, as
			// it should; here every slot must get its task.
			s := schedule.Schedule{Name: "beat", Every: time.Second, Overlap: schedule.Allow, Task: schedule.Task{Kind: "beat"}}
			var mu sync.Mutex
			ran := map[string]int{} // by idempotency key
			fn := func(_ context.Context, x *task.Task) error {
				mu.Lock()
				ran[x.IdempotencyKey]++
				mu.Unlock()
				return nil
			}
			for i, st := range sts {
				cfg := testConfig(st)
				cfg.WorkerID = "w" + string(rune('1'+i))
				cfg.Schedules = []schedule.Schedule{s}
				start(t, cfg, Handler{Kind: "beat", Fn: fn})
			}
			waitFor(t, 30*time.Second, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(ran) >= 10
			}, func() string { return "ten slots run" })
			ts, err := sts[0].ListTasks(context.Background(), task.Filter{Kind: "beat"})
			if err != nil {
				t.Fatal(err)
			}
			var prev time.Time
			for i, x := range ts {
				_, at, _, ok := schedule.ParseKey(x.IdempotencyKey)
				if !ok {
					t.Fatalf("task %d: key %q", x.ID, x.IdempotencyKey)
				}
				if i > 0 && at.Sub(prev) != time.Second {
					t.Errorf("slot %v follows %v: a slot left out or doubled", at, prev)
				}
				prev = at
			}
			mu.Lock()
			defer mu.Unlock()
			for key, n := range ran {
				if n != 1 {
					t.Errorf("%s ran %d times", key, n)
				}
			}
			if len(ts) < 10 {
				t.Errorf("%d tasks for at least ten slots run", len(ts))
			}
		})
	}
}
