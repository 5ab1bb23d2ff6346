package sqlite_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// claimFinish claims batches of 100 and finishes each as a success until a
// claim comes back empty, and returns how many tasks it did.
func claimFinish(b *testing.B, s store.Store, worker string) int {
	ctx := context.Background()
	done := 0
	for {
		got, err := s.Claim(ctx, store.ClaimRequest{Worker: worker, Limit: 100, Lease: time.Minute})
		if err != nil {
			b.Error(err)
			return done
		}
		if len(got) == 0 {
			return done
		}
		fs := make([]store.Finish, len(got))
		for i, c := range got {
			fs[i] = store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Success}
		}
		if _, err := s.Finish(ctx, fs); err != nil {
			b.Error(err)
			return done
		}
		done += len(got)
	}
}

// BenchmarkClaimFinish claims and finishes b.N enqueued tasks in batches of
// 100, with one worker.
func BenchmarkClaimFinish(b *testing.B) {
	s := openTemp(b)
	b.Cleanup(func() { s.Close() })
	enqueueN(b, s, b.N)
	b.ResetTimer()
	if done := claimFinish(b, s, "w"); done != b.N {
		b.Fatalf("did %d tasks, want %d", done, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
}

// BenchmarkClaimFinishParallel is BenchmarkClaimFinish with four workers,
// whose claims and finishes the writer commits together.
func BenchmarkClaimFinishParallel(b *testing.B) {
	s := openTemp(b)
	b.Cleanup(func() { s.Close() })
	enqueueN(b, s, b.N)
	b.ResetTimer()
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for _, w := range []string{"w1", "w2", "w3", "w4"} {
		wg.Go(func() {
			n := claimFinish(b, s, w)
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

// BenchmarkEnqueue inserts b.N tasks in calls of 100.
func BenchmarkEnqueue(b *testing.B) {
	s := openTemp(b)
	b.Cleanup(func() { s.Close() })
	batch := make([]task.NewTask, 100)
	for i := range batch {
		batch[i] = task.NewTask{Kind: "k", Args: []byte(`{"n":1}`)}
	}
	b.ResetTimer()
	for left := b.N; left > 0; left -= len(batch) {
		if _, err := s.Enqueue(context.Background(), batch[:min(left, len(batch))]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
}

// BenchmarkEnqueueOneEachParallel inserts one task per call from many
// goroutines: the writer turns them into shared transactions.
func BenchmarkEnqueueOneEachParallel(b *testing.B) {
	s := openTemp(b)
	b.Cleanup(func() { s.Close() })
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		one := []task.NewTask{{Kind: "k"}}
		for pb.Next() {
			if _, err := s.Enqueue(context.Background(), one); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
}
