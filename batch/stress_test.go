package batch_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grit-run/grit/batch"
	"github.com/grit-run/grit/retry"
)

// TestManyGoroutines runs on real time, for the race detector: senders that
// wait for each item and senders that send bursts, callers that give up
// before and during flushes, a failed first attempt of every third batch
// and rejected items, all at once.
func TestManyGoroutines(t *testing.T) {
	t.Parallel()
	const senders, each, maxInFlight = 32, 200, 3
	var running, most atomic.Int32
	var mu sync.Mutex
	successes := map[int]int{}
	flush := func(ctx context.Context, items []int) ([]int, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if items[0]%3 == 0 && retry.AllowanceFrom(ctx).Left() == 3 {
			return nil, retry.Transient(errDeadline)
		}
		rejected := make(batch.ItemErrors, len(items))
		mu.Lock()
		defer mu.Unlock()
		for i, v := range items {
			if v%7 == 0 {
				rejected[i] = errRejected
				continue
			}
			successes[v]++
		}
		return tenfold(items), rejected
	}
	b := mustNew(t, batch.Config[int, int]{
		Flush: flush, MaxSize: 16, Interval: time.Millisecond, MaxPending: 64, MaxInFlight: maxInFlight,
		Clock: &fakeClock{},
	})
	// Bounds the test if the batcher hangs: every Wait fails instead.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			var fs []*batch.Future[int]
			for i := range each {
				v := s*each + i
				f := b.Send(callerContext(ctx, v), v)
				if s%2 == 0 {
					check(t, ctx, f, v)
				} else {
					fs = append(fs, f)
				}
			}
			for i, f := range fs {
				check(t, ctx, f, s*each+i)
			}
		})
	}
	wg.Wait()
	mustClose(t, b)

	if m := most.Load(); m > maxInFlight {
		t.Errorf("%d flushes ran at once, want at most %d", m, maxInFlight)
	}
	for v := range senders * each {
		// An item whose caller gave up on its way may have been sent or not.
		sure := v%11 != 0 && v%13 != 0 && v%7 != 0
		if sure && successes[v] != 1 || successes[v] > 1 {
			t.Errorf("item %d succeeded %d times in Flush", v, successes[v])
		}
		if v%11 == 0 && successes[v] != 0 {
			t.Errorf("item %d was sent though its caller had given up", v)
		}
	}
}

// callerContext gives every 11th item a caller that gave up before sending
// and every 13th one that gives up while it is on its way.
func callerContext(ctx context.Context, v int) context.Context {
	switch {
	case v%11 == 0:
		ctx, cancel := context.WithCancelCause(ctx)
		cancel(errGaveUp)
		return ctx
	case v%13 == 0:
		ctx, cancel := context.WithCancelCause(ctx)
		time.AfterFunc(time.Duration(v%5)*time.Millisecond, func() { cancel(errGaveUp) })
		return ctx
	}
	return ctx
}

func check(t *testing.T, ctx context.Context, f *batch.Future[int], v int) {
	got, err := f.Wait(ctx)
	switch {
	case v%11 == 0 || v%13 == 0 && errors.Is(err, errGaveUp):
		if !errors.Is(err, errGaveUp) {
			t.Errorf("item %d: %v, want the caller's cause", v, err)
		}
	case v%7 == 0:
		if !errors.Is(err, errRejected) {
			t.Errorf("item %d: %v, want its rejection", v, err)
		}
	case err != nil || got != v*10:
		t.Errorf("item %d: %d, %v", v, got, err)
	}
}
