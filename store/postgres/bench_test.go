package postgres_test

import (
	"context"
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
// 100 (one statement to claim, one transaction to finish), with one
// worker.
func BenchmarkClaimFinish(b *testing.B) {
	benchClaimFinish(b, 1)
}

// BenchmarkClaimFinishParallel is BenchmarkClaimFinish with four workers
// sharing the store's pool.
func BenchmarkClaimFinishParallel(b *testing.B) {
	benchClaimFinish(b, 4)
}

func benchClaimFinish(b *testing.B, workers int) {
	benchClaimFinishOn(b, openTest(b), workers)
}

// BenchmarkEnqueue inserts b.N tasks in calls of 100.
func BenchmarkEnqueue(b *testing.B) {
	benchEnqueue(b, 100)
}

// BenchmarkEnqueueBulk inserts b.N tasks in calls of 5000.
func BenchmarkEnqueueBulk(b *testing.B) {
	benchEnqueue(b, 5000)
}

func benchEnqueue(b *testing.B, size int) {
	s := openTest(b)
	batch := make([]task.NewTask, size)
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
