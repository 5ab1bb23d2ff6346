package engine

import (
	"context"
	"testing"
	"time"

	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// TestPostgresNotificationWakesAnIdleWorker runs an idle engine on
// PostgreSQL whose poll is a minute long, then enqueues through another
// store (another process, as far as the engine can tell): the task runs
// within seconds, so the notification woke the worker, not the poll.
func TestPostgresNotificationWakesAnIdleWorker(t *testing.T) {
	t.Parallel()
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
	tk := enqueue(t, other, task.NewTask{Kind: "ping"})
	select {
	case <-ran:
	case <-time.After(15 * time.Second):
		t.Fatal("the task enqueued elsewhere did not run: the notification did not wake the worker")
	}
	waitState(t, st, tk.ID, task.Success)
}

// TestPostgresConnectionsKilled terminates every connection of an idle
// engine's store (the listener's and the pool's) with
// pg_terminate_backend: the listener reconnects and work enqueued
// elsewhere still starts within seconds, although the poll is a minute.
func TestPostgresConnectionsKilled(t *testing.T) {
	t.Parallel()
	schema := pgtest.NewSchema(t)
	app := "grit_killed_" + schema
	dsn := pgtest.WithSchema(schema) + "&application_name=" + app // WithSchema always has a query
	st, err := postgres.OpenConfig(t.Context(), postgres.Config{DSN: dsn, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := testConfig(st)
	cfg.Poll = time.Minute
	ran := make(chan struct{}, 2)
	e := start(t, cfg, Handler{Kind: "ping", Fn: func(context.Context, *task.Task) error {
		ran <- struct{}{}
		return nil
	}})
	waitFor(t, 10*time.Second, func() bool { return e.Stats().Claims.Load() >= 1 }, func() string { return "no first claim" })

	var killed int
	err = pgtest.Admin(t).QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&killed)
	if err != nil || killed == 0 {
		t.Fatalf("terminated %d connections (%v); want the listener and the pool's", killed, err)
	}
	other := pgtest.OpenIn(t, schema)
	for i := range 2 {
		tk := enqueue(t, other, task.NewTask{Kind: "ping"})
		select {
		case <-ran:
		case <-time.After(20 * time.Second):
			t.Fatalf("task %d enqueued after the connections were killed did not run: wake-ups did not resume", i+1)
		}
		// Read through the other store: the test's own reads are not what
		// is tested, and one may meet a killed connection still idle in
		// the engine's pool.
		waitState(t, other, tk.ID, task.Success)
	}
}
