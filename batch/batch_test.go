package batch_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/grit-run/grit/batch"
	"github.com/grit-run/grit/retry"
)

// Tests run in testing/synctest bubbles: time is fake and advances only
// when every goroutine is blocked, synctest.Wait waits for that, and a
// goroutine the Batcher leaks fails the test.

func TestFlushBySize(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var r recorder
		b := mustNew(t, batch.Config[int, int]{Flush: r.echo, MaxSize: 3, Interval: time.Hour})
		var fs []*batch.Future[int]
		for i := range 7 {
			fs = append(fs, b.Send(t.Context(), i))
		}
		synctest.Wait()
		if got, want := r.Calls(), [][]int{{0, 1, 2}, {3, 4, 5}}; !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("flushed %v, want %v", got, want)
		}
		if done(fs[6]) {
			t.Fatal("the 7th item was flushed before its batch was full or its interval passed")
		}
		for i, f := range fs[:6] {
			wantResult(t, f, i)
		}
		mustClose(t, b)
		wantResult(t, fs[6], 6)
	})
}

func TestFlushByInterval(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var r recorder
		b := mustNew(t, batch.Config[int, int]{Flush: r.echo, Interval: 20 * time.Millisecond})
		defer mustClose(t, b)
		start := time.Now()
		f1 := b.Send(t.Context(), 1)
		time.Sleep(5 * time.Millisecond)
		f2 := b.Send(t.Context(), 2)
		wantResult(t, f1, 1)
		wantResult(t, f2, 2)
		if waited := time.Since(start); waited != 20*time.Millisecond {
			t.Errorf("the batch went %v after its first item, want the interval, 20ms", waited)
		}
		// The next batch's interval starts at its own first item.
		time.Sleep(time.Second)
		start = time.Now()
		if got, err := b.Do(t.Context(), 3); got != 30 || err != nil {
			t.Fatalf("Do(3) = %d, %v", got, err)
		}
		if waited := time.Since(start); waited != 20*time.Millisecond {
			t.Errorf("the second batch went %v after its first item, want 20ms", waited)
		}
		if got, want := r.Calls(), [][]int{{1, 2}, {3}}; !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("flushed %v, want %v", got, want)
		}
	})
}

func TestItemErrors(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var r recorder
		flush := func(_ context.Context, items []int) ([]int, error) {
			r.record(items)
			rejected := make(batch.ItemErrors, len(items))
			for i, v := range items {
				if v%2 == 1 {
					rejected[i] = fmt.Errorf("item %d: %w", v, errRejected)
				}
			}
			return tenfold(items), rejected
		}
		b := mustNew(t, batch.Config[int, int]{Flush: flush, MaxSize: 4, Retryable: func(error) bool { return true }})
		defer mustClose(t, b)
		var fs []*batch.Future[int]
		for i := range 4 {
			fs = append(fs, b.Send(t.Context(), i))
		}
		for i, f := range fs {
			if i%2 == 0 {
				wantResult(t, f, i)
				continue
			}
			_, err := f.Wait(t.Context())
			if !errors.Is(err, errRejected) || err.Error() != fmt.Sprintf("item %d: %v", i, errRejected) {
				t.Errorf("item %d: got %v, want its own rejection", i, err)
			}
		}
		if n := len(r.Calls()); n != 1 {
			t.Errorf("Flush called %d times, want once: a batch rejected item by item is not retried", n)
		}
	})
}

func TestWrongResultCount(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		flush func(context.Context, []int) ([]int, error)
	}{
		{"results", func(_ context.Context, items []int) ([]int, error) { return tenfold(items[1:]), nil }},
		{"item errors", func(_ context.Context, items []int) ([]int, error) {
			return tenfold(items), make(batch.ItemErrors, 1)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				calls := 0
				flush := func(ctx context.Context, items []int) ([]int, error) { calls++; return tt.flush(ctx, items) }
				b := mustNew(t, batch.Config[int, int]{Flush: flush, MaxSize: 2, Retryable: func(error) bool { return true }})
				defer mustClose(t, b)
				f1, f2 := b.Send(t.Context(), 1), b.Send(t.Context(), 2)
				for _, f := range []*batch.Future[int]{f1, f2} {
					_, err := f.Wait(t.Context())
					var be *batch.Error
					if !errors.Is(err, batch.ErrResultCount) || !errors.As(err, &be) || be.Attempts != 1 || be.Items != 2 {
						t.Errorf("got %v, want a batch.Error of 2 items after 1 attempt wrapping ErrResultCount", err)
					}
				}
				if calls != 1 {
					t.Errorf("Flush called %d times, want once: a wrong count is a bug, not retried", calls)
				}
				t.Log(f1.Wait(t.Context()))
			})
		})
	}
}

func TestCallerCanceledBeforeFlush(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var r recorder
		b := mustNew(t, batch.Config[int, int]{Flush: r.echo, MaxSize: 3, Interval: time.Hour})
		defer mustClose(t, b)
		ctx, cancel := context.WithCancelCause(t.Context())
		fa := b.Send(ctx, 1)
		cancel(errGaveUp)
		synctest.Wait()
		if _, err := fa.Wait(context.Background()); !errors.Is(err, errGaveUp) {
			t.Fatalf("canceled caller got %v, want its context's cause", err)
		}
		fb, fc := b.Send(t.Context(), 2), b.Send(t.Context(), 3)
		wantResult(t, fb, 2)
		wantResult(t, fc, 3)
		if got, want := r.Calls(), [][]int{{2, 3}}; !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("flushed %v, want %v: a canceled item is not sent", got, want)
		}
		if f := b.Send(ctx, 4); !done(f) {
			t.Error("Send with an ended context returned a pending future")
		}
	})
}

func TestCallerCanceledInFlight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var r recorder
		release := make(chan struct{})
		flush := func(ctx context.Context, items []int) ([]int, error) {
			<-release
			return r.echo(ctx, items)
		}
		b := mustNew(t, batch.Config[int, int]{Flush: flush, MaxSize: 3})
		defer mustClose(t, b)
		ctx, cancel := context.WithCancelCause(t.Context())
		fa, fb, fc := b.Send(ctx, 1), b.Send(t.Context(), 2), b.Send(t.Context(), 3)
		synctest.Wait() // the batch is in Flush

		start := time.Now()
		waitCtx, stopWaiting := context.WithCancelCause(t.Context())
		stopWaiting(errGaveUp)
		if _, err := fb.Wait(waitCtx); !errors.Is(err, errGaveUp) {
			t.Errorf("Wait with an ended context: %v, want its cause", err)
		}
		cancel(errGaveUp)
		if _, err := fa.Wait(t.Context()); !errors.Is(err, errGaveUp) {
			t.Errorf("in-flight caller canceled: %v, want its context's cause", err)
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("Wait took %v after the cancellation, want at once", waited)
		}

		close(release)
		wantResult(t, fb, 2) // the Wait that gave up did not spoil the future
		wantResult(t, fc, 3)
		if got, want := r.Calls(), [][]int{{1, 2, 3}}; !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("flushed %v, want %v", got, want)
		}
	})
}

func TestSendBlocksWhenFull(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var r recorder
		release := make(chan struct{})
		flush := func(ctx context.Context, items []int) ([]int, error) {
			<-release
			return r.echo(ctx, items)
		}
		b := mustNew(t, batch.Config[int, int]{Flush: flush, MaxSize: 2, MaxPending: 2, MaxInFlight: 1})
		defer mustClose(t, b)
		f1, f2 := b.Send(t.Context(), 1), b.Send(t.Context(), 2)

		start := time.Now()
		ctx, cancel := context.WithTimeoutCause(t.Context(), time.Second, errGaveUp)
		defer cancel()
		f3 := b.Send(ctx, 3)
		if waited := time.Since(start); waited != time.Second {
			t.Errorf("Send into a full batcher returned after %v, want at its deadline, 1s", waited)
		}
		if !done(f3) {
			t.Fatal("Send that found no room returned a pending future")
		}
		if _, err := f3.Wait(t.Context()); !errors.Is(err, errGaveUp) {
			t.Errorf("got %v, want the context's cause", err)
		}

		sent := make(chan *batch.Future[int])
		go func() { sent <- b.Send(t.Context(), 4) }()
		synctest.Wait()
		select {
		case <-sent:
			t.Fatal("Send returned while the batcher was full")
		default:
		}
		close(release)
		f4 := <-sent
		for i, f := range []*batch.Future[int]{f1, f2, f4} {
			wantResult(t, f, []int{1, 2, 4}[i])
		}
		if got, want := r.Calls(), [][]int{{1, 2}, {4}}; !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("flushed %v, want %v", got, want)
		}
	})
}

func TestMaxInFlight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var r recorder
		running, most := 0, 0
		flush := func(ctx context.Context, items []int) ([]int, error) {
			r.mu.Lock()
			running++
			most = max(most, running)
			r.mu.Unlock()
			time.Sleep(time.Second)
			r.mu.Lock()
			running--
			r.mu.Unlock()
			return tenfold(items), nil
		}
		b := mustNew(t, batch.Config[int, int]{Flush: flush, MaxSize: 1, MaxInFlight: 2})
		var fs []*batch.Future[int]
		for i := range 7 {
			fs = append(fs, b.Send(t.Context(), i))
		}
		start := time.Now()
		mustClose(t, b)
		for i, f := range fs {
			wantResult(t, f, i)
		}
		if most != 2 {
			t.Errorf("at most %d flushes ran at once, want MaxInFlight, 2", most)
		}
		if took := time.Since(start); took != 4*time.Second {
			t.Errorf("7 one-second flushes two at a time took %v, want 4s", took)
		}
	})
}

func TestClose(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var r recorder
		flush := func(ctx context.Context, items []int) ([]int, error) {
			time.Sleep(5 * time.Second)
			return r.echo(ctx, items)
		}
		b := mustNew(t, batch.Config[int, int]{Flush: flush, MaxSize: 2, Interval: time.Hour})
		fs := []*batch.Future[int]{b.Send(t.Context(), 1), b.Send(t.Context(), 2), b.Send(t.Context(), 3)}
		start := time.Now()
		mustClose(t, b)
		if waited := time.Since(start); waited != 5*time.Second {
			t.Errorf("Close returned after %v, want after the flushes, 5s", waited)
		}
		for i, f := range fs {
			if !done(f) {
				t.Fatalf("item %d pending after Close", i+1)
			}
			wantResult(t, f, i+1)
		}
		if _, err := b.Send(t.Context(), 4).Wait(t.Context()); !errors.Is(err, batch.ErrClosed) || err.Error() != "batch: closed" {
			t.Errorf("Send after Close: %v, want ErrClosed", err)
		}
		if _, err := b.Do(t.Context(), 5); !errors.Is(err, batch.ErrClosed) {
			t.Errorf("Do after Close: %v, want ErrClosed", err)
		}
		mustClose(t, b)
		if n := len(r.Calls()); n != 2 {
			t.Errorf("Flush called %d times, want 2", n)
		}
	})
}

func TestCloseWakesBlockedSend(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		flush := func(_ context.Context, items []int) ([]int, error) { <-release; return tenfold(items), nil }
		b := mustNew(t, batch.Config[int, int]{Flush: flush, MaxSize: 1, MaxPending: 1})
		f1 := b.Send(t.Context(), 1)
		sent := make(chan *batch.Future[int])
		go func() { sent <- b.Send(t.Context(), 2) }()
		synctest.Wait()
		closed := make(chan error)
		go func() { closed <- b.Close(t.Context()) }()
		if _, err := (<-sent).Wait(t.Context()); !errors.Is(err, batch.ErrClosed) {
			t.Errorf("Send blocked when Close came: %v, want ErrClosed", err)
		}
		close(release)
		if err := <-closed; err != nil {
			t.Errorf("Close: %v", err)
		}
		wantResult(t, f1, 1)
	})
}

func TestCloseBoundedByContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		flush := func(ctx context.Context, items []int) ([]int, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		// One batch in flight, one queued behind MaxInFlight, one buffered.
		b := mustNew(t, batch.Config[int, int]{
			Flush: flush, MaxSize: 1, MaxInFlight: 1, Timeout: -1, Retryable: func(error) bool { return true },
		})
		fs := []*batch.Future[int]{b.Send(t.Context(), 1), b.Send(t.Context(), 2)}
		ctx, cancel := context.WithTimeoutCause(t.Context(), time.Second, errGaveUp)
		defer cancel()
		if err := b.Close(ctx); !errors.Is(err, errGaveUp) {
			t.Errorf("Close: %v, want its context's cause", err)
		}
		for i, f := range fs {
			_, err := f.Wait(t.Context())
			var be *batch.Error
			if !errors.Is(err, batch.ErrClosed) || !errors.Is(err, errGaveUp) || !errors.As(err, &be) || be.Reason != retry.ReasonCanceled {
				t.Errorf("item %d: %v, want a batch.Error wrapping ErrClosed and Close's cause", i+1, err)
			}
		}
		t.Log(fs[0].Wait(t.Context()))
		t.Log(fs[1].Wait(t.Context()))
	})
}

func TestPanics(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		flush func(context.Context, []int) ([]int, error)
		cfg   batch.Config[int, int]
	}{
		{name: "in Flush", flush: func(context.Context, []int) ([]int, error) { panic("boom") }},
		{
			name:  "in Retryable",
			flush: func(context.Context, []int) ([]int, error) { return nil, errRejected },
			cfg:   batch.Config[int, int]{Retryable: func(error) bool { panic("boom") }},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				calls := 0
				cfg := tt.cfg
				cfg.Flush = func(ctx context.Context, items []int) ([]int, error) {
					if calls++; calls == 1 {
						return tt.flush(ctx, items)
					}
					return tenfold(items), nil
				}
				b := mustNew(t, cfg)
				defer mustClose(t, b)
				_, err := b.Do(t.Context(), 1)
				var pe *retry.PanicError
				var be *batch.Error
				if !errors.As(err, &pe) || pe.Value != "boom" || !errors.As(err, &be) || be.Attempts != 1 {
					t.Fatalf("got %v, want a batch.Error after 1 attempt wrapping the panic", err)
				}
				t.Log(err)
				if got, err := b.Do(t.Context(), 2); got != 20 || err != nil {
					t.Errorf("after the panic, Do(2) = %d, %v; want 20, nil", got, err)
				}
			})
		})
	}
}
