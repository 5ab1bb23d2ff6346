package batch_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/batch"
)

var (
	// errDeadline stands for a gRPC DEADLINE_EXCEEDED answer.
	errDeadline = errors.New("rpc error: code = DeadlineExceeded desc = context deadline exceeded")
	errRejected = errors.New("server: item rejected")
	errGaveUp   = errors.New("caller gave up")
)

// recorder remembers every batch Flush was called with.
type recorder struct {
	mu    sync.Mutex
	calls [][]int
}

// record adds items and returns the call's number, from 1.
func (r *recorder) record(items []int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, slices.Clone(items))
	return len(r.calls)
}

// Calls returns the batches sorted by their first item, since concurrent
// flushes are called in any order.
func (r *recorder) Calls() [][]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls := slices.Clone(r.calls)
	slices.SortFunc(calls, func(a, b []int) int { return a[0] - b[0] })
	return calls
}

// tenfold is the result of item i: i × 10.
func tenfold(items []int) []int {
	res := make([]int, len(items))
	for i, v := range items {
		res[i] = v * 10
	}
	return res
}

// echo is a Flush that records its batches and answers tenfold.
func (r *recorder) echo(_ context.Context, items []int) ([]int, error) {
	r.record(items)
	return tenfold(items), nil
}

func mustNew(t testing.TB, cfg batch.Config[int, int]) *batch.Batcher[int, int] {
	t.Helper()
	b, err := batch.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustClose(t testing.TB, b *batch.Batcher[int, int]) {
	t.Helper()
	if err := b.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// wantResult checks that f holds item × 10. f must be done.
func wantResult(t testing.TB, f *batch.Future[int], item int) {
	t.Helper()
	got, err := f.Wait(context.Background())
	if err != nil || got != item*10 {
		t.Errorf("item %d: got (%d, %v), want (%d, nil)", item, got, err, item*10)
	}
}

// done reports whether f is settled, without waiting.
func done(f *batch.Future[int]) bool {
	select {
	case <-f.Done():
		return true
	default:
		return false
	}
}

// fakeClock sleeps no time and records the delays it was asked for.
type fakeClock struct {
	mu    sync.Mutex
	slept []time.Duration
}

func (c *fakeClock) Now() time.Time { return time.Time{} }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	c.mu.Lock()
	c.slept = append(c.slept, d)
	c.mu.Unlock()
	return nil
}

func (c *fakeClock) Slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.slept)
}

// fixedRand always draws the same number.
type fixedRand float64

func (f fixedRand) Float64() float64 { return float64(f) }
