package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/store/storetest"
	"github.com/grit-run/grit/task"
)

// TestConformanceThroughPgBouncer runs the conformance suite on stores
// whose connections go through a PgBouncer in transaction mode with its
// default settings, listening for notifications on a direct connection
// (NotifyDSN): no statement may count on a session.
func TestConformanceThroughPgBouncer(t *testing.T) {
	t.Parallel()
	bouncer := pgtest.Bouncer(t, "")
	open := func(t *testing.T, schema string) store.Store {
		s, err := postgres.OpenConfig(t.Context(), postgres.Config{DSN: bouncer, Schema: schema, NotifyDSN: testDSN()})
		if err != nil {
			t.Fatalf("open through PgBouncer: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		if !s.Connections().Pooled {
			t.Fatal("the store did not find the pooler in front of the database")
		}
		return s
	}
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, newSchema(t)) },
		storetest.WakesAcrossHandles(func(t *testing.T, s store.Store) store.Store {
			return open(t, s.(*postgres.Store).Schema())
		}),
		storetest.CancelsAcrossHandles(),
		storetest.RefusesSuccesses(func(t *testing.T, s store.Store, kind string) {
			pgtest.Refuse(t, s.(*postgres.Store).Schema(), kind, "refused by the test's trigger")
		}))
}

// TestRouteThroughPgBouncer: a store finds the pooler in front of the
// database and says so; without a direct connection for them it has no
// notifications (store.ErrNoNotifications) and listens nowhere; a direct
// store listens on its own DSN.
func TestRouteThroughPgBouncer(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	pooled, err := postgres.OpenConfig(bounded(t), postgres.Config{DSN: pgtest.Bouncer(t, schema), MaxConns: 3, HeartbeatConns: 1})
	if err != nil {
		t.Fatalf("open through PgBouncer: %v", err)
	}
	defer pooled.Close()
	want := store.Connections{Pooled: true, Pool: 3, Heartbeats: 1}
	if got := pooled.Connections(); got != want {
		t.Errorf("through PgBouncer: %+v, want %+v", got, want)
	}
	for what, watch := range map[string]func(ctx context.Context) error{
		"Wake":         func(ctx context.Context) error { _, err := pooled.Wake(ctx); return err },
		"WatchCancels": func(ctx context.Context) error { _, err := pooled.WatchCancels(ctx); return err },
		"WatchPauses":  func(ctx context.Context) error { _, err := pooled.WatchPauses(ctx); return err },
	} {
		if err := watch(bounded(t)); !errors.Is(err, store.ErrNoNotifications) || !strings.Contains(err.Error(), "NotifyDSN") {
			t.Errorf("%s through PgBouncer: %v, want store.ErrNoNotifications saying how to get them", what, err)
		}
	}
	direct := openIn(t, schema)
	got := direct.Connections()
	if got.Pooled || got.Listen != 1 || got.Heartbeats != postgres.DefaultHeartbeatConns || !strings.Contains(got.Notify, "127.0.0.1:5432/") {
		t.Errorf("direct: %+v, want not pooled, listening once on the server, %d heartbeat connections", got, postgres.DefaultHeartbeatConns)
	}
}

// TestNotifyDSNMustBeDirect: a notify DSN that goes through the pooler
// too, or names another database, is refused at open, saying why.
func TestNotifyDSNMustBeDirect(t *testing.T) {
	t.Parallel()
	bouncer := pgtest.Bouncer(t, "")
	for _, c := range []struct{ notify, says string }{
		{bouncer, "goes through a connection pooler too"},
		{strings.Replace(testDSN(), "/test?", "/postgres?", 1), `names database "postgres", the store's is`},
	} {
		s, err := postgres.OpenConfig(bounded(t), postgres.Config{DSN: bouncer, Schema: newSchema(t), NotifyDSN: c.notify})
		if err == nil {
			s.Close()
			t.Errorf("notify DSN %s: opened, want an error saying it %s", redacted(c.notify), c.says)
		} else if !strings.Contains(err.Error(), c.says) {
			t.Errorf("notify DSN %s: %v, want it to say it %s", redacted(c.notify), err, c.says)
		}
	}
}

// TestMigrateThroughPgBouncer: processes that migrate at once through the
// pooler (which hands them the same server connections) migrate once, and
// a store then opens on the schema; the migrations' lock is the
// transaction's, and no prepared statement collides.
func TestMigrateThroughPgBouncer(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	dsn := pgtest.Bouncer(t, schema)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = postgres.Migrate(bounded(t), dsn) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("migrate %d: %v", i, err)
		}
	}
	s, err := postgres.OpenExisting(bounded(t), dsn)
	if err != nil {
		t.Fatalf("open the migrated schema through PgBouncer: %v", err)
	}
	s.Close()
}

// TestAdviceOnJITThroughPgBouncer: through a pooler the store cannot turn
// JIT off, and its advice says so when the server has it on; directly it
// turns it off itself and says nothing of it.
func TestAdviceOnJITThroughPgBouncer(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	var jit string
	if err := admin(t).QueryRow(bounded(t), `SELECT current_setting('jit')`).Scan(&jit); err != nil {
		t.Fatal(err)
	}
	if jit != "on" {
		t.Fatalf("the test server has jit = %s by default: this test needs PostgreSQL's default, on", jit)
	}
	pooled, err := postgres.Open(bounded(t), pgtest.Bouncer(t, schema))
	if err != nil {
		t.Fatal(err)
	}
	defer pooled.Close()
	for _, c := range []struct {
		s    *postgres.Store
		want bool
	}{{pooled, true}, {openIn(t, schema), false}} {
		advice, err := c.s.Advice(bounded(t))
		if err != nil {
			t.Fatal(err)
		}
		said := strings.Contains(strings.Join(advice, "\n"), "ALTER ROLE \"postgres\" SET jit = off")
		if said != c.want {
			t.Errorf("pooled %v: advice %q; want the JIT advice: %v", c.s.Connections().Pooled, advice, c.want)
		}
	}
}

// TestOneListeningConnection: the store's watchers share one listening
// connection, which each hears through, and which closes once the last
// of them ends.
func TestOneListeningConnection(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s, other := openIn(t, schema), openIn(t, schema)
	ctx, cancel := context.WithCancel(bounded(t))
	woken, err := s.Wake(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cancels, err := s.WatchCancels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pauses, err := s.WatchPauses(ctx)
	if err != nil {
		t.Fatal(err)
	}
	listening := func() int {
		var n int
		if err := admin(t).QueryRow(bounded(t), `SELECT count(*) FROM pg_stat_activity WHERE starts_with(query, $1)`,
			`LISTEN "grit_`+schema+`_due";`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := listening(); n != 1 {
		t.Fatalf("%d connections listen for the store's three watchers, want 1", n)
	}
	ts, err := other.Enqueue(ctx, []task.NewTask{{Kind: "k"}})
	if err != nil {
		t.Fatal(err)
	}
	waitWake(t, woken, "an enqueue through another store")
	if _, err := other.Pause(ctx, store.Pause{Scope: store.ScopeQueue, Name: "q", Who: "test"}); err != nil {
		t.Fatal(err)
	}
	waitWake(t, pauses, "a pause through another store")
	c, err := other.Claim(ctx, store.ClaimRequest{Worker: "w", Limit: 1})
	if err != nil || len(c) != 1 {
		t.Fatalf("claim: %v %v", c, err)
	}
	if _, err := other.Act(ctx, ts[0].ID, task.ActCancel); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-cancels:
		if id != ts[0].ID {
			t.Errorf("heard the cancel of task %d, want %d", id, ts[0].ID)
		}
	case <-time.After(testTimeout):
		t.Fatal("the cancel was not heard")
	}
	cancel()
	poll.Until(t, testTimeout, "the listening connection to close once its watchers ended", func() bool { return listening() == 0 })
}
