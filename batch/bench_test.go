package batch_test

import (
	"context"
	"testing"
	"time"

	"github.com/grit-run/grit/batch"
)

// BenchmarkSend measures the batcher's own cost per item: parallel senders
// against a Flush that does nothing.
func BenchmarkSend(b *testing.B) {
	bt := mustNew(b, batch.Config[int, int]{
		Flush:    func(_ context.Context, items []int) ([]int, error) { return make([]int, len(items)), nil },
		Interval: time.Millisecond,
	})
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		fs := make([]*batch.Future[int], 0, 256)
		wait := func() {
			for _, f := range fs {
				if _, err := f.Wait(ctx); err != nil {
					b.Error(err)
				}
			}
			fs = fs[:0]
		}
		for i := 0; pb.Next(); i++ {
			if fs = append(fs, bt.Send(ctx, i)); len(fs) == cap(fs) {
				wait()
			}
		}
		wait()
	})
	b.StopTimer()
	mustClose(b, bt)
}
