package engine

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grit-run/grit/retention"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// BenchmarkWorkWhilePruning measures, on PostgreSQL, one engine working
// 20,000 no-op tasks (enqueued first) on a store that also holds
// GRIT_PRUNE_BENCH_TASKS finished tasks (a million by default) two days
// old: without pruning, and while pruners delete those finished tasks a
// round of 1,000 at a time, as fast as they can (far faster than workers
// prune: ten rounds a minute at most). It reports tasks worked a second,
// and the tasks pruned meanwhile. docs/bench.md has the figures.
func BenchmarkWorkWhilePruning(b *testing.B) {
	old := 1_000_000
	if s := os.Getenv("GRIT_PRUNE_BENCH_TASKS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1000 {
			b.Fatalf("GRIT_PRUNE_BENCH_TASKS=%q: want a number of tasks, 1000 or more", s)
		}
		old = n
	}
	const work = 20_000
	for _, pruners := range []int{0, 2} {
		b.Run(fmt.Sprintf("pruners=%d", pruners), func(b *testing.B) {
			for range b.N {
				schema := pgtest.NewSchema(b)
				st := pgtest.OpenIn(b, schema)
				ctx := context.Background()
				if _, err := pgtest.Admin(b).Exec(ctx, `INSERT INTO `+schema+`.tasks (kind, queue, state, created_at, first_started_at, finished_at, attempt)
					SELECT 'old-' || (i % 10), 'default', 'SUCCESS', now() - interval '3 days', now() - interval '3 days', now() - interval '2 days', 1
					FROM generate_series(1, $1) i`, old); err != nil {
					b.Fatal(err)
				}
				if _, err := pgtest.Admin(b).Exec(ctx, `ANALYZE `+schema+`.tasks`); err != nil {
					b.Fatal(err)
				}
				nts := make([]task.NewTask, 1000)
				for i := range nts {
					nts[i] = task.NewTask{Kind: "noop"}
				}
				for range work / 1000 {
					if _, err := st.Enqueue(ctx, nts); err != nil {
						b.Fatal(err)
					}
				}
				var pruned atomic.Int64
				pctx, stop := context.WithCancel(ctx)
				done := make(chan struct{})
				pol, _ := retention.Parse("success=1d")
				req := pruneRequest(pol, 1000)
				for range pruners {
					go func() {
						defer func() { done <- struct{}{} }()
						for pctx.Err() == nil {
							r, err := st.Prune(pctx, req)
							if err != nil {
								return
							}
							pruned.Add(int64(r.Tasks))
						}
					}()
				}
				cfg := testConfig(st)
				cfg.Concurrency, cfg.Logger, cfg.Retention = 1000, slog.New(slog.DiscardHandler), retention.Policy{Off: true}
				cfg.Lease, cfg.Heartbeat = 30*time.Second, 10*time.Second
				var finished atomic.Int64
				all := make(chan struct{})
				fn := func(context.Context, *task.Task) error {
					if finished.Add(1) == work {
						close(all)
					}
					return nil
				}
				start := time.Now()
				e := startBench(b, cfg, Handler{Kind: "noop", Fn: fn})
				select {
				case <-all:
				case <-time.After(5 * time.Minute):
					b.Fatal("the work did not end within 5 minutes")
				}
				took := time.Since(start)
				stop()
				for range pruners {
					<-done
				}
				stopBench(e)
				b.ReportMetric(float64(work)/took.Seconds(), "tasks/s")
				b.ReportMetric(float64(pruned.Load()), "pruned")
			}
		})
	}
}

func startBench(b *testing.B, cfg Config, hs ...Handler) *Engine {
	e, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	for _, h := range hs {
		if err := e.Register(h); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	return e
}

func stopBench(e *Engine) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e.Stop(ctx)
}
