package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
)

// defaultTestDSN is the database the tests use unless GRIT_TEST_POSTGRES
// names another.
const defaultTestDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// testTimeout bounds every wait of these tests.
const testTimeout = 30 * time.Second

func testDSN() string {
	if dsn := os.Getenv("GRIT_TEST_POSTGRES"); dsn != "" {
		return dsn
	}
	return defaultTestDSN
}

// withSchema is the test DSN with grit's schema parameter.
func withSchema(schema string) string {
	u, err := url.Parse(testDSN())
	if err != nil {
		panic(err)
	}
	q := u.Query()
	q.Set("schema", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

var (
	adminOnce sync.Once
	adminPool *pgxpool.Pool
	adminErr  error
)

// admin is a small pool on the test database, shared by the tests, for
// creating and dropping schemas and looking behind the store's back. When
// PostgreSQL is unreachable the test fails under CI=true, where the
// PostgreSQL tests must run, and is skipped loudly elsewhere.
func admin(t testing.TB) *pgxpool.Pool {
	t.Helper()
	adminOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cfg, err := pgxpool.ParseConfig(testDSN())
		if err != nil {
			adminErr = err
			return
		}
		cfg.MaxConns = 2
		adminPool, adminErr = pgxpool.NewWithConfig(ctx, cfg)
		if adminErr == nil {
			adminErr = adminPool.Ping(ctx)
		}
	})
	if adminErr != nil {
		where := redacted(testDSN())
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL unreachable at %s: %v\nCI needs it: start it with: pg_ctlcluster --skip-systemctl-redirect 15 main start (scripts/test does), or set GRIT_TEST_POSTGRES", where, adminErr)
		}
		t.Skipf("\n*** SKIPPED: PostgreSQL unreachable at %s: %v; start it with: pg_ctlcluster --skip-systemctl-redirect 15 main start (or set GRIT_TEST_POSTGRES) ***", where, adminErr)
	}
	return adminPool
}

func redacted(dsn string) string {
	if u, err := url.Parse(dsn); err == nil {
		return u.Redacted()
	}
	return "(an unparsable GRIT_TEST_POSTGRES)"
}

// newSchema names a schema of the test's own, dropped when the test ends
// (after the stores opened later have closed: cleanups run last first).
func newSchema(t testing.TB) string {
	t.Helper()
	db := admin(t)
	name := fmt.Sprintf("grit_test_%016x", rand.Uint64())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if _, err := db.Exec(ctx, `DROP SCHEMA IF EXISTS `+name+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	return name
}

// openIn opens a store on a schema, closed when the test ends.
func openIn(t testing.TB, schema string) *postgres.Store {
	t.Helper()
	s, err := postgres.OpenConfig(t.Context(), postgres.Config{DSN: testDSN(), Schema: schema})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openTest opens a store on a new schema.
func openTest(t testing.TB) *postgres.Store {
	t.Helper()
	return openIn(t, newSchema(t))
}

// bounded is a context that ends with the test or after testTimeout.
func bounded(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func enqueueN(t testing.TB, s store.Store, n int) {
	t.Helper()
	for start := 0; start < n; start += 1000 {
		ts := make([]store.NewTask, min(1000, n-start))
		for i := range ts {
			ts[i] = store.NewTask{Kind: "k"}
		}
		if _, err := s.Enqueue(t.Context(), ts); err != nil {
			t.Fatal(err)
		}
	}
}
