package engine

import (
	"context"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// TestPostgresNotificationWakesAnIdleWorker runs an idle engine on
// PostgreSQL whose poll is a minute long, then enqueues through another
// store (another process, as far as the engine can tell): the task runs
// within seconds, so the notification woke the worker, not the poll.
func TestPostgresNotificationWakesAnIdleWorker(t *testing.T) {
	schema := pgtest.NewSchema(t)
	st := pgtest.OpenIn(t, schema)
	cfg := testConfig(st)
	cfg.Poll = time.Minute
	ran := make(chan struct{}, 1)
	e := start(t, cfg, Handler{Kind: "ping", Fn: func(context.Context, *task.Task) error {
		ran <- struct{}{}
		return nil
	}})
	// Let the claim loop go idle: it has claimed nothing and sleeps.
	waitFor(t, 10*time.Second, func() bool { return e.Stats().Claims.Load() >= 1 }, func() string { return "no first claim" })

	other := pgtest.OpenIn(t, schema)
	tk := enqueue(t, other, store.NewTask{Kind: "ping"})
	select {
	case <-ran:
	case <-time.After(15 * time.Second):
		t.Fatal("the task enqueued elsewhere did not run: the notification did not wake the worker")
	}
	waitState(t, st, tk.ID, task.Success)
}
