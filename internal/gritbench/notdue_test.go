package gritbench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/store/postgres/pgtest"
)

// notDue is how many tasks due in an hour BenchmarkStartBehindNotDue
// enqueues before it times starts: GRIT_BENCH_NOT_DUE, default 100,000.
func notDue(b *testing.B) int {
	v := os.Getenv("GRIT_BENCH_NOT_DUE")
	if v == "" {
		return 100_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		b.Fatalf("GRIT_BENCH_NOT_DUE=%q: want a count of tasks, e.g. 1000000", v)
	}
	return n
}

// BenchmarkStartBehindNotDue times enqueue to start, as grit bench does,
// with none waiting and with notDue tasks due in an hour: tasks not yet
// due must cost a claim nothing (docs/bench.md, "A backlog not yet due").
// Each iteration is one measurement of Latency starts.
func BenchmarkStartBehindNotDue(b *testing.B) {
	stores := map[string]func(b *testing.B) Opener{
		"sqlite": func(b *testing.B) Opener {
			dir, n := b.TempDir(), 0
			return func() (Target, error) {
				n++
				dsn := "sqlite:" + filepath.Join(dir, fmt.Sprintf("b%d.db", n))
				st, err := store.Open(context.Background(), dsn)
				return Target{Store: st, DSN: dsn}, err
			}
		},
		"postgres": func(b *testing.B) Opener {
			return func() (Target, error) {
				schema := pgtest.NewSchema(b)
				st, err := postgres.OpenConfig(context.Background(), postgres.Config{DSN: pgtest.DSN(), Schema: schema})
				return Target{Store: st, DSN: pgtest.WithSchema(schema)}, err
			}
		},
	}
	for _, name := range []string{"sqlite", "postgres"} {
		for _, waiting := range []int{0, notDue(b)} {
			b.Run(fmt.Sprintf("%s/waiting=%d", name, waiting), func(b *testing.B) {
				open := stores[name](b)
				filled := func() (Target, error) {
					tg, err := open()
					if err != nil {
						return tg, err
					}
					return tg, enqueueLater(context.Background(), tg.Store, waiting, time.Hour)
				}
				cfg := Config{Latency: 500}
				cfg.defaults()
				var p50, p99 float64
				for b.Loop() {
					var r Result
					if err := startLatency(context.Background(), filled, cfg, &r); err != nil {
						b.Fatal(err)
					}
					p50, p99 = p50+r.StartP50, p99+r.StartP99
				}
				b.ReportMetric(p50/float64(b.N), "p50-ms")
				b.ReportMetric(p99/float64(b.N), "p99-ms")
			})
		}
	}
}

// enqueueLater enqueues n no-op tasks due after d, in batches of 5,000.
func enqueueLater(ctx context.Context, st store.Store, n int, d time.Duration) error {
	at := time.Now().Add(d)
	for done := 0; done < n; done += 5000 {
		ts := noops(min(5000, n-done), "later")
		for i := range ts {
			ts[i].RunAt = at
		}
		if _, err := st.Enqueue(ctx, ts); err != nil {
			return err
		}
	}
	return nil
}
