package engine

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/store/sqlite/sqlitetest"
	"github.com/grit-run/grit/task"
)

// newStore opens a SQLite store in a temporary directory.
func newStore(t testing.TB) store.Store { t.Helper(); return newSQLite(t) }

// newSQLite is newStore for a test's wrapper, which embeds the real store
// to change a method or two and keeps every capability it has (the engine
// refuses a store without the required ones).
func newSQLite(t testing.TB) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// testConfig is a fast engine: short leases and heartbeats, logs to the
// test when -v.
func testConfig(st store.Store) Config {
	level := slog.LevelError
	if testing.Verbose() {
		level = slog.LevelDebug
	}
	return Config{
		Store: st, Concurrency: 4, Lease: 2 * time.Second, Heartbeat: 100 * time.Millisecond,
		Poll: 200 * time.Millisecond, StuckGrace: 300 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
	}
}

// start starts an engine with the handlers and stops it at the end of the
// test.
func start(t *testing.T, cfg Config, hs ...Handler) *Engine {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if err := e.Register(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		e.Stop(ctx)
	})
	return e
}

func enqueue(t *testing.T, st store.Store, n task.NewTask) task.Task {
	t.Helper()
	ts, err := st.Enqueue(context.Background(), []task.NewTask{n})
	if err != nil {
		t.Fatal(err)
	}
	return ts[0].Task
}

func execArgs(t *testing.T, x task.Exec) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitState waits, bounded, until the task is in one of the states, and
// returns it.
func waitState(t *testing.T, st store.Store, id int64, states ...task.State) task.Task {
	t.Helper()
	var last task.Task
	waitFor(t, 20*time.Second, func() bool {
		var err error
		last, err = st.GetTask(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range states {
			if last.State == s {
				return true
			}
		}
		return false
	}, func() string { return "task in state " + string(last.State) + ", error " + last.LastError })
	return last
}

// waitFor polls cond until it holds, failing the test after timeout with
// what says (poll.UntilSays in this package's argument order).
func waitFor(t *testing.T, timeout time.Duration, cond func() bool, what func() string) {
	t.Helper()
	poll.UntilSays(t, timeout, what, cond)
}

func attempts(t *testing.T, st store.Store, id int64) []task.Attempt {
	t.Helper()
	as, err := st.Attempts(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// counter counts calls safely.
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) inc() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.n
}

func (c *counter) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
