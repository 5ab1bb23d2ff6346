package sqlite_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// TestHandlesInOneProcessTakeTurns: two handles of one process on one
// file write in turn, never meeting SQLite's lock: with no busy timeout
// at all (a write that met the lock would fail at once, "database is
// locked"), hundreds of concurrent enqueues through both all succeed.
func TestHandlesInOneProcessTakeTurns(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "grit.db")
	open := func() *sqlite.Store {
		st, err := sqlite.OpenConfig(t.Context(), sqlite.Config{Path: path, BusyTimeout: time.Microsecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	a, b := open(), open()
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for i := range 400 {
		st := a
		if i%2 == 1 {
			st = b
		}
		wg.Go(func() {
			_, err := st.Enqueue(context.Background(), []task.NewTask{{Kind: "k"}})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("an enqueue through one of two handles: %v", err)
		}
	}
	ts, err := a.ListTasks(t.Context(), task.Filter{})
	if err != nil || len(ts) != 400 {
		t.Fatalf("%d tasks (%v), want 400", len(ts), err)
	}
}
