// Package pgtest gives tests a PostgreSQL store of their own: a fresh
// schema per test in the test database, dropped when the test ends. When
// PostgreSQL is unreachable, a test fails under CI=true (where the
// PostgreSQL tests must run) and is skipped loudly elsewhere.
package pgtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/grit-run/grit/store/postgres"
)

// DefaultDSN is the database the tests use unless GRIT_TEST_POSTGRES names
// another.
const DefaultDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// DSN is the test database.
func DSN() string {
	if dsn := os.Getenv("GRIT_TEST_POSTGRES"); dsn != "" {
		return dsn
	}
	return DefaultDSN
}

// WithSchema is the test DSN with grit's schema parameter.
func WithSchema(schema string) string {
	u, err := url.Parse(DSN())
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

// Admin is a small pool on the test database, shared by the tests, for
// creating and dropping schemas and looking behind a store's back.
func Admin(t testing.TB) *pgxpool.Pool {
	t.Helper()
	adminOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cfg, err := pgxpool.ParseConfig(DSN())
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
		where := Redacted(DSN())
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL unreachable at %s: %v\nCI needs it: start it with: pg_ctlcluster --skip-systemctl-redirect 15 main start (scripts/test does), or set GRIT_TEST_POSTGRES", where, adminErr)
		}
		t.Skipf("\n*** SKIPPED: PostgreSQL unreachable at %s: %v; start it with: pg_ctlcluster --skip-systemctl-redirect 15 main start (or set GRIT_TEST_POSTGRES) ***", where, adminErr)
	}
	return adminPool
}

// Redacted is a DSN without its password.
func Redacted(dsn string) string {
	if u, err := url.Parse(dsn); err == nil {
		return u.Redacted()
	}
	return "(an unparsable GRIT_TEST_POSTGRES)"
}

// NewSchema names a schema of the test's own, dropped when the test ends
// (after the stores opened later have closed: cleanups run last first).
func NewSchema(t testing.TB) string {
	t.Helper()
	db := Admin(t)
	name := fmt.Sprintf("grit_test_%016x", rand.Uint64())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.Exec(ctx, `DROP SCHEMA IF EXISTS `+name+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	return name
}

// OpenIn opens a store on a schema, closed when the test ends.
func OpenIn(t testing.TB, schema string) *postgres.Store {
	t.Helper()
	s, err := postgres.OpenConfig(t.Context(), postgres.Config{DSN: DSN(), Schema: schema})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Open opens a store on a new schema of the test's own.
func Open(t testing.TB) *postgres.Store {
	t.Helper()
	return OpenIn(t, NewSchema(t))
}

// Refuse makes the database of the store on schema refuse to record the
// success of the tasks of kind (of every kind when kind is ""): a trigger
// raises message when such a task's row would become SUCCESS, as a broken
// constraint or a full disk would. It returns what lets them again.
func Refuse(t testing.TB, schema, kind, message string) (allow func()) {
	t.Helper()
	db := Admin(t)
	name := fmt.Sprintf("refuse_%016x", rand.Uint64())
	s, fn := pgx.Identifier{schema}.Sanitize(), pgx.Identifier{schema, name}.Sanitize()
	when := `NEW.state = 'SUCCESS' AND OLD.state <> 'SUCCESS'`
	if kind != "" {
		when += ` AND NEW.kind = ` + literal(kind)
	}
	ctx := context.Background()
	for _, q := range []string{
		`CREATE FUNCTION ` + fn + `() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '%', ` + literal(message) + `; END $$`,
		`CREATE TRIGGER ` + name + ` BEFORE UPDATE ON ` + s + `.tasks FOR EACH ROW WHEN (` + when + `) EXECUTE FUNCTION ` + fn + `()`,
	} {
		if _, err := db.Exec(ctx, q); err != nil {
			t.Fatalf("pgtest: refuse the successes of %q: %v", kind, err)
		}
	}
	return func() {
		if _, err := db.Exec(ctx, `DROP TRIGGER `+name+` ON `+s+`.tasks`); err != nil {
			t.Errorf("pgtest: let the successes of %q again: %v", kind, err)
		}
	}
}

// literal quotes s as an SQL string literal.
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
