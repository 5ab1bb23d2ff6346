package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// testTimeout bounds every wait of these tests.
const testTimeout = 30 * time.Second

func testDSN() string                  { return pgtest.DSN() }
func withSchema(schema string) string  { return pgtest.WithSchema(schema) }
func admin(t testing.TB) *pgxpool.Pool { return pgtest.Admin(t) }
func redacted(dsn string) string       { return pgtest.Redacted(dsn) }
func newSchema(t testing.TB) string    { return pgtest.NewSchema(t) }

func openIn(t testing.TB, schema string) *postgres.Store { return pgtest.OpenIn(t, schema) }
func openTest(t testing.TB) *postgres.Store              { return pgtest.Open(t) }

// bounded is a context that ends with the test or after testTimeout.
func bounded(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// boundedCall runs f with a context that ends with the test or after
// testTimeout: for the calls of a test that makes thousands, each bounded,
// where one bound over them all would be a bound on the machine's speed.
func boundedCall(t testing.TB, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	return f(ctx)
}

func enqueueN(t testing.TB, s store.Store, n int) {
	t.Helper()
	for start := 0; start < n; start += 1000 {
		ts := make([]task.NewTask, min(1000, n-start))
		for i := range ts {
			ts[i] = task.NewTask{Kind: "k"}
		}
		if _, err := s.Enqueue(t.Context(), ts); err != nil {
			t.Fatal(err)
		}
	}
}
