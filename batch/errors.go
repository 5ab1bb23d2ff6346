package batch

import (
	"errors"
	"fmt"

	"github.com/grit-run/grit/retry"
)

var (
	// ErrClosed is the error of a Send after Close, and the cause of the
	// failure of batches that Close's context cut off.
	ErrClosed = errors.New("batch: closed")
	// ErrTimeout marks a flush attempt that ran past Config.Timeout. Such an
	// attempt is always retried while the allowance lasts: the Batcher cut
	// it off itself, so the downstream was slow, not necessarily wrong.
	ErrTimeout = errors.New("batch: flush attempt timed out")
	// ErrResultCount is a Flush that returned a result slice or ItemErrors
	// of another length than its batch: a bug in Flush, never retried.
	ErrResultCount = errors.New("batch: wrong number of results")
	// ErrConfig is wrapped by every error of New about its Config.
	ErrConfig = errors.New("batch: invalid config")
)

// Error fails every future of a batch that failed as a whole: its last
// attempt's error, how many items the batch held, how many attempts were
// made and why the Batcher stopped trying. It unwraps to the last attempt's
// error, so errors.Is, errors.As and retry.Classify see the cause.
type Error struct {
	Items    int // items in the batch, not counting callers who gave up
	Attempts int // flush attempts made; 0 if Close cut the batch off first
	// Reason is retry.ReasonPermanent (the error is not retryable),
	// retry.ReasonExhausted (the allowance is used up) or
	// retry.ReasonCanceled (Close's context ended first).
	Reason retry.Reason
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("batch: flush of %d %s failed after %d %s (%s): %v",
		e.Items, plural(e.Items, "item"), e.Attempts, plural(e.Attempts, "attempt"), e.why(), e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) why() string {
	switch e.Reason {
	case retry.ReasonPermanent:
		return "not retryable"
	case retry.ReasonExhausted:
		return "retries used up"
	case retry.ReasonCanceled:
		return "batcher closed"
	}
	return e.Reason.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// ItemErrors is how Flush says that the downstream answered the batch but
// rejected some of its items: return the results (one per item, as always)
// together with an ItemErrors holding one entry per item, nil where the item
// succeeded. Each rejected item's future fails with its own entry, as it is;
// the others get their results. A batch answered so is not retried, since
// the downstream did answer: each caller decides about its own item.
type ItemErrors []error

func (e ItemErrors) Error() string {
	var first error
	n := 0
	for _, err := range e {
		if err == nil {
			continue
		}
		if n == 0 {
			first = err
		}
		n++
	}
	return fmt.Sprintf("batch: %d of %d items rejected, the first: %v", n, len(e), first)
}

// Unwrap returns the rejections, so that errors.Is finds any of them.
func (e ItemErrors) Unwrap() []error {
	var errs []error
	for _, err := range e {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
