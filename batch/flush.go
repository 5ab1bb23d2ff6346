package batch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/grit-run/grit/retry"
)

// flush sends one batch, retrying it as a whole, and settles its futures.
func (b *Batcher[T, R]) flush(batch []*entry[T, R]) {
	live := b.take(batch)
	if len(live) == 0 {
		return
	}
	defer b.release(len(live))
	items := make([]T, len(live))
	for i, e := range live {
		items[i] = e.item
	}
	res, rejected, err := b.send(items)
	for i, e := range live {
		e.stop()
		switch {
		case err != nil:
			e.f.fail(err)
		case rejected != nil && rejected[i] != nil:
			e.f.fail(rejected[i])
		default:
			e.f.settle(res[i], nil)
		}
	}
}

// take returns the entries of batch whose callers still wait, and gives
// back the places of the others, which are not sent.
func (b *Batcher[T, R]) take(batch []*entry[T, R]) []*entry[T, R] {
	live := batch[:0]
	for _, e := range batch {
		if e.f.settled() {
			e.stop()
			b.release(1)
			continue
		}
		live = append(live, e)
	}
	return live
}

// fail fails a batch that was never sent.
func (b *Batcher[T, R]) fail(batch []*entry[T, R], cause error) {
	live := b.take(batch)
	err := &Error{Items: len(live), Reason: retry.ReasonCanceled, Err: cause}
	for _, e := range live {
		e.stop()
		e.f.fail(err)
	}
	b.release(len(live))
}

// send calls Flush until it succeeds, the batch is rejected item by item,
// or a failure is not to be retried. The batch's context carries the
// allowance that this loop and the layers inside Flush share. A panic out
// of a user hook (Retryable, Backoff, Clock) fails the batch, not the
// process.
func (b *Batcher[T, R]) send(items []T) (res []R, rejected ItemErrors, err error) {
	n := 0
	defer func() {
		if v := recover(); v != nil {
			res, rejected = nil, nil
			err = &Error{Items: len(items), Attempts: n, Reason: retry.ReasonPermanent, Err: retry.Recovered(v)}
		}
	}()
	ctx := retry.WithAllowance(b.life, b.cfg.Retries)
	allowance := retry.AllowanceFrom(ctx)
	var prev time.Duration
	for {
		n++
		res, rejected, err = b.attempt(ctx, items)
		if err == nil {
			return res, rejected, nil
		}
		delay, reason := b.decide(n, prev, err, allowance)
		cause := context.Cause(b.life)
		if reason == retry.ReasonRetry {
			if cause = b.cfg.Clock.Sleep(b.life, delay); cause == nil {
				prev = delay
				continue
			}
			reason = retry.ReasonCanceled
		}
		if reason == retry.ReasonCanceled {
			err = fmt.Errorf("%w; the last attempt: %w", cause, err)
		}
		return nil, nil, &Error{Items: len(items), Attempts: n, Reason: reason, Err: err}
	}
}

// attempt calls Flush once, under the attempt's Timeout, and checks what it
// returned. A panic in Flush is this attempt's error.
func (b *Batcher[T, R]) attempt(ctx context.Context, items []T) (res []R, rejected ItemErrors, err error) {
	ctx, cancel := b.attemptContext(ctx)
	defer cancel()
	res, err = b.call(ctx, items)
	if err != nil && !errors.As(err, &rejected) {
		if context.Cause(ctx) == b.timeout && !errors.Is(err, ErrTimeout) {
			err = fmt.Errorf("%w: %w", b.timeout, err)
		}
		return nil, nil, err
	}
	if len(res) != len(items) {
		return nil, nil, fmt.Errorf("%w: Flush returned %d for %d %s; want one per item, in order",
			ErrResultCount, len(res), len(items), plural(len(items), "item"))
	}
	if rejected != nil && len(rejected) != len(items) {
		return nil, nil, fmt.Errorf("%w: Flush returned ItemErrors of %d for %d %s; want one per item, nil where it succeeded",
			ErrResultCount, len(rejected), len(items), plural(len(items), "item"))
	}
	return res, rejected, nil
}

func (b *Batcher[T, R]) call(ctx context.Context, items []T) (res []R, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, retry.Recovered(v)
		}
	}()
	return b.cfg.Flush(ctx, items)
}

func (b *Batcher[T, R]) attemptContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if b.cfg.Timeout < 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, b.cfg.Timeout, b.timeout)
}

// decide returns the delay before retrying after attempt n failed with err,
// or why not to retry. Only a retry that is going to happen takes from the
// allowance.
func (b *Batcher[T, R]) decide(n int, prev time.Duration, err error, allowance *retry.Allowance) (time.Duration, retry.Reason) {
	switch {
	case b.life.Err() != nil:
		return 0, retry.ReasonCanceled
	case errors.Is(err, ErrResultCount):
		return 0, retry.ReasonPermanent
	case !errors.Is(err, ErrTimeout) && !b.cfg.Retryable(err):
		return 0, retry.ReasonPermanent
	case !allowance.Take():
		return 0, retry.ReasonExhausted
	}
	delay := b.cfg.Backoff.Delay(n, prev, b.cfg.Rand)
	if class, after := retry.Classify(err); class == retry.ClassAfter {
		delay = max(delay, after)
	}
	return delay, retry.ReasonRetry
}
