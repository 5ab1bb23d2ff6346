package postgres_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// routes are the ways a store can reach the test database that
// BenchmarkRoutes compares: straight (with pgx's named statements, and
// with the unnamed ones a pooler needs), and through a PgBouncer in
// transaction mode with each of pgx's modes that keep no statement by
// name (the store's choice, QueryExecModeCacheDescribe, first).
func routes(b *testing.B) []struct{ name, dsn string } {
	bouncer := pgtest.Bouncer(b, "")
	with := func(dsn, param string) string {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + param
	}
	return []struct{ name, dsn string }{
		{"direct", pgtest.DSN()},
		{"direct-cache_describe", with(pgtest.DSN(), "default_query_exec_mode=cache_describe")},
		{"pgbouncer", bouncer},
		{"pgbouncer-exec", with(bouncer, "default_query_exec_mode=exec")},
		{"pgbouncer-simple_protocol", with(bouncer, "default_query_exec_mode=simple_protocol")},
	}
}

// BenchmarkRoutes claims and finishes in batches of 100 (one worker, and
// four sharing the store), enqueues one task a call (a commit a task),
// and reads the database's clock (Now: a round trip and nothing else), on
// each route: what a pooler and the statement mode cost.
func BenchmarkRoutes(b *testing.B) {
	for _, r := range routes(b) {
		open := func(b *testing.B) store.Store {
			s, err := postgres.OpenConfig(b.Context(), postgres.Config{DSN: r.dsn, Schema: newSchema(b)})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}
		b.Run("ClaimFinish/"+r.name, func(b *testing.B) { benchClaimFinishOn(b, open(b), 1) })
		b.Run("ClaimFinishParallel/"+r.name, func(b *testing.B) { benchClaimFinishOn(b, open(b), 4) })
		b.Run("EnqueueOne/"+r.name, func(b *testing.B) {
			s := open(b)
			one := []task.NewTask{{Kind: "k", Args: []byte(`{"n":1}`)}}
			b.ResetTimer()
			for range b.N {
				if _, err := s.Enqueue(context.Background(), one); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
		})
		b.Run("Now/"+r.name, func(b *testing.B) {
			s := open(b)
			b.ResetTimer()
			for range b.N {
				if _, err := s.Now(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchClaimFinishOn(b *testing.B, s store.Store, workers int) {
	enqueueN(b, s, b.N)
	b.ResetTimer()
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for w := range workers {
		wg.Go(func() {
			n := claimFinish(b, s, string(rune('a'+w)))
			mu.Lock()
			total += n
			mu.Unlock()
		})
	}
	wg.Wait()
	if total != b.N {
		b.Fatalf("did %d tasks, want %d", total, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
}
