package grit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

func TestCatchSQLite(t *testing.T) {
	t.Parallel()
	st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "grit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	testCatch(t, st)
}

func TestCatchPostgres(t *testing.T) { testCatch(t, pgtest.Open(t)) }

type order struct {
	ID   string `json:"id"`
	Fail string `json:"fail"` // permanent, transient or poison
}

// testCatch fails tasks permanently, by running out of retries and as
// poison: each FAILED task's catch task runs exactly once with the failed
// task, its kind, args, last error and attempts; the dead letter gets none.
func testCatch(t *testing.T, st store.Store) {
	c, err := grit.New(st, grit.Config{Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fail := func(_ context.Context, o order) error {
		switch o.Fail {
		case "permanent":
			return retry.Permanent(errors.New("card declined"))
		case "transient":
			return retry.Transient(errors.New("gateway busy"))
		}
		return errors.New("bad order " + o.ID)
	}
	var mu sync.Mutex
	caught := map[int64][]task.Caught{}
	if err := grit.Handle(c, "charge_card", fail, grit.HandlerConfig{Policy: "2 1ms", Catch: "refund"}); err != nil {
		t.Fatal(err)
	}
	if err := grit.Handle(c, "ship", fail, grit.HandlerConfig{Policy: "5 1ms", Catch: "refund"}); err != nil {
		t.Fatal(err)
	}
	if err := grit.Handle(c, "refund", func(_ context.Context, k task.Caught) error {
		mu.Lock()
		defer mu.Unlock()
		caught[k.Task] = append(caught[k.Task], k)
		return nil
	}, grit.HandlerConfig{}); err != nil {
		t.Fatal(err)
	}
	perm, _ := c.Enqueue(ctx, "charge_card", order{"o-1", "permanent"}, grit.InQueue("pay"), grit.ForTenant("acme"))
	out, _ := c.Enqueue(ctx, "charge_card", order{"o-2", "transient"})
	dead, err := c.Enqueue(ctx, "ship", order{"o-3", "poison"})
	if err != nil {
		t.Fatal(err)
	}
	startClient(t, c)
	waitTask(t, c, perm.Task.ID, task.Failed)
	waitTask(t, c, out.Task.ID, task.Failed)
	waitTask(t, c, dead.Task.ID, task.DeadLetter)

	want := map[int64]task.Caught{
		perm.Task.ID: {Task: perm.Task.ID, Kind: "charge_card", Error: "card declined", Attempts: 1},
		out.Task.ID:  {Task: out.Task.ID, Kind: "charge_card", Error: "gateway busy", Attempts: 3},
	}
	// The catch tasks were inserted with the failures: they are there now.
	refunds, err := st.ListTasks(ctx, task.Filter{Kind: "refund"})
	if err != nil || len(refunds) != 2 {
		t.Fatalf("catch tasks %+v (%v), want 2: one for each FAILED task, none for the dead letter", refunds, err)
	}
	for _, r := range refunds {
		waitTask(t, c, r.ID, task.Success)
	}
	for _, r := range refunds {
		if r.IdempotencyKey == fmt.Sprintf("catch:%d", perm.Task.ID) && (r.Queue != "pay" || r.Tenant != "acme") {
			t.Errorf("catch task in queue %q, tenant %q: want the failed task's pay, acme", r.Queue, r.Tenant)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(caught) != 2 {
		t.Errorf("caught %v, want tasks %d and %d only (not the dead letter %d)", caught, perm.Task.ID, out.Task.ID, dead.Task.ID)
	}
	for id, w := range want {
		got := caught[id]
		if len(got) != 1 {
			t.Errorf("task %d caught %d times, want once", id, len(got))
			continue
		}
		g := got[0]
		var args order
		if err := json.Unmarshal(g.Args, &args); err != nil || args.Fail == "" {
			t.Errorf("task %d: caught args %s do not decode to the order: %v", id, g.Args, err)
		}
		g.Args = nil
		if g.Task != w.Task || g.Kind != w.Kind || !strings.Contains(g.Error, w.Error) || g.Attempts != w.Attempts {
			t.Errorf("task %d caught %+v, want %+v", id, g, w)
		}
	}
}
