package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// waitWake waits, bounded, for a value on woken.
func waitWake(t *testing.T, woken <-chan struct{}, after string) {
	t.Helper()
	select {
	case _, ok := <-woken:
		if !ok {
			t.Fatalf("%s: the wake channel closed", after)
		}
	case <-time.After(testTimeout):
		t.Fatalf("%s: no wake-up within %v", after, testTimeout)
	}
}

// drain empties woken without waiting.
func drain(woken <-chan struct{}) {
	select {
	case <-woken:
	default:
	}
}

// TestWakeSurvivesTerminatedConnection: a listener hears an Enqueue made
// through another Store, has its connection killed by the server, comes
// back by itself (saying so), and hears the next Enqueue.
func TestWakeSurvivesTerminatedConnection(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	listener, sender := openIn(t, schema), openIn(t, schema)
	ctx := bounded(t)
	woken, err := listener.Wake(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sender.Enqueue(ctx, []task.NewTask{{Kind: "k"}}); err != nil {
		t.Fatal(err)
	}
	waitWake(t, woken, "enqueue from another store")
	drain(woken)

	var killed int
	err = admin(t).QueryRow(ctx, `WITH l AS MATERIALIZED (
			SELECT pid FROM pg_stat_activity WHERE starts_with(query, $1) AND pid <> pg_backend_pid()
		) SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM l`,
		`LISTEN "grit_`+schema+`_due";`).Scan(&killed)
	if err != nil || killed != 1 {
		t.Fatalf("terminated %d listening backends (%v), want 1", killed, err)
	}
	waitWake(t, woken, "the listener's reconnection") // it listens again, and says work may be missed

	if _, err := sender.Enqueue(ctx, []task.NewTask{{Kind: "k"}}); err != nil {
		t.Fatal(err)
	}
	waitWake(t, woken, "enqueue after the reconnection")
}

// TestWakeHearsEveryKindOfDueWork: a run's READY tasks, a retry, a
// dependent released by a success and a replayed dead letter each wake the
// listener.
func TestWakeHearsEveryKindOfDueWork(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	listener, s := openIn(t, schema), openIn(t, schema)
	ctx := bounded(t)
	woken, err := listener.Wake(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SubmitRun(ctx, task.NewRun{Name: "r", Tasks: []task.NewTask{
		{Name: "a", Kind: "a"}, {Name: "b", Kind: "b", Needs: []string{"a"}},
	}}); err != nil {
		t.Fatal(err)
	}
	waitWake(t, woken, "submit run")
	claim := func(kind string) store.Lease {
		c, err := s.Claim(ctx, store.ClaimRequest{Worker: "w", Kinds: []string{kind}, Limit: 1})
		if err != nil || len(c) != 1 {
			t.Fatalf("claim %s: %v %v", kind, c, err)
		}
		return store.Lease{TaskID: c[0].ID, Token: c[0].LeaseToken}
	}
	finish := func(l store.Lease, state string) {
		errs, err := s.Finish(ctx, []store.Finish{{TaskID: l.TaskID, Token: l.Token, State: stateOf(state)}})
		if err != nil || errs[0] != nil {
			t.Fatalf("finish %s: %v %v", state, err, errs)
		}
	}
	finish(claim("a"), "RETRYING")
	waitWake(t, woken, "retry")
	finish(claim("a"), "SUCCESS")
	waitWake(t, woken, "dependent released")
	b := claim("b")
	finish(b, "DEAD_LETTER")
	if _, err := s.Act(ctx, b.TaskID, task.ActReplay); err != nil {
		t.Fatal(err)
	}
	waitWake(t, woken, "replay")
}

// TestWakeEndsWithTheStore: Close closes the channel.
func TestWakeEndsWithTheStore(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	woken, err := s.Wake(bounded(t))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	select {
	case _, ok := <-woken:
		if ok {
			t.Error("got a wake-up, want the channel closed")
		}
	case <-time.After(testTimeout):
		t.Fatal("the wake channel stayed open after Close")
	}
	if _, err := s.Wake(bounded(t)); !errors.Is(err, postgres.ErrClosed) {
		t.Errorf("Wake after Close: %v, want ErrClosed", err)
	}
}

func stateOf(s string) task.State { return task.State(s) }

// TestLongSchemaNotifies: on a schema whose name is as long as a
// store allows (54), enqueues wake a listener and a running task's
// cancel reaches WatchCancels: the channels' names fit pg_notify.
func TestLongSchemaNotifies(t *testing.T) {
	t.Parallel()
	schema := pgtest.NewSchema(t)
	long := schema + strings.Repeat("x", 54-len(schema)) // the longest a schema may be
	t.Cleanup(func() {
		if _, err := pgtest.Admin(t).Exec(context.Background(), `DROP SCHEMA IF EXISTS `+long+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", long, err)
		}
	})
	st := pgtest.OpenIn(t, long)
	ctx := t.Context()
	woken, err := st.Wake(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cancels, err := st.WatchCancels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := st.Enqueue(ctx, []task.NewTask{{Kind: "k"}})
	if err != nil {
		t.Fatalf("enqueue on a schema of 54 characters: %v", err)
	}
	select {
	case <-woken:
	case <-time.After(10 * time.Second):
		t.Fatal("no wake after an enqueue")
	}
	if c, err := st.Claim(ctx, store.ClaimRequest{Worker: "w", Limit: 1, Lease: time.Minute}); err != nil || len(c) != 1 {
		t.Fatalf("claim: %v, %v", c, err)
	}
	if _, err := st.Act(ctx, ts[0].ID, task.ActCancel); err != nil {
		t.Fatalf("cancel a running task on a schema of 54 characters: %v", err)
	}
	select {
	case id := <-cancels:
		if id != ts[0].ID {
			t.Errorf("cancel of task %d, want %d", id, ts[0].ID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no cancel notification")
	}
}
