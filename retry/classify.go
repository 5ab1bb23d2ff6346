package retry

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Sentinels matched by the marked errors' Is methods, so that
// errors.Is(err, retry.ErrPermanent) tells whether err was marked permanent.
// They are marks themselves too: an error that wraps one,
// fmt.Errorf("call payments: %w", retry.ErrTransient), is classified as if
// marked with Transient (ErrAfter asks for no particular delay).
var (
	ErrPermanent = errors.New("retry: permanent")
	ErrTransient = errors.New("retry: transient")
	ErrAfter     = errors.New("retry: retry after")
	ErrResource  = errors.New("retry: resource pressure")
)

// Class is the kind of a failure, as far as retrying is concerned.
type Class uint8

const (
	// Unclassified is any error that carries no mark: it is retried per the
	// policy (unless the policy is explicit-only) and checked for poison.
	Unclassified Class = iota
	// ClassTransient is retried with backoff and never counts as poison.
	ClassTransient
	// ClassPermanent is never retried.
	ClassPermanent
	// ClassAfter is retried no sooner than the delay the error carries.
	ClassAfter
	// ClassResource is deferred with the policy's resource backoff.
	ClassResource
	// ClassCanceled is context.Canceled: never retried.
	ClassCanceled
)

var classNames = [...]string{"unclassified", "transient", "permanent", "after", "resource", "canceled"}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("Class(%d)", uint8(c))
}

// Retryable reports whether errors of this class are marked as retryable:
// the only ones an explicit-only policy retries.
func (c Class) Retryable() bool {
	return c == ClassTransient || c == ClassAfter || c == ClassResource
}

// PermanentError marks an error that must not be retried.
type PermanentError struct{ Err error }

// TransientError marks an error that is worth retrying and is never poison:
// a blip that repeats is still a blip.
type TransientError struct{ Err error }

// AfterError marks an error to retry no sooner than Delay (HTTP 429 with
// Retry-After, a rate limit's reset time).
type AfterError struct {
	Err   error
	Delay time.Duration
}

// ResourceError marks resource pressure (a full cluster, a scheduling
// timeout, an eviction, an exhausted pool): the work is deferred with the
// resource backoff instead of being retried soon.
type ResourceError struct{ Err error }

// Permanent marks err as not worth retrying. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// Transient marks err as worth retrying and never poison. Transient(nil) is nil.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return &TransientError{Err: err}
}

// After marks err to be retried no sooner than d. After(nil, d) is nil.
func After(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &AfterError{Err: err, Delay: max(d, 0)}
}

// Resource marks err as resource pressure. Resource(nil) is nil.
func Resource(err error) error {
	if err == nil {
		return nil
	}
	return &ResourceError{Err: err}
}

func (e *PermanentError) Error() string        { return errString(e.Err) }
func (e *PermanentError) Unwrap() error        { return e.Err }
func (e *PermanentError) Is(target error) bool { return target == ErrPermanent }

func (e *TransientError) Error() string        { return errString(e.Err) }
func (e *TransientError) Unwrap() error        { return e.Err }
func (e *TransientError) Is(target error) bool { return target == ErrTransient }

func (e *AfterError) Error() string        { return errString(e.Err) }
func (e *AfterError) Unwrap() error        { return e.Err }
func (e *AfterError) Is(target error) bool { return target == ErrAfter }

func (e *ResourceError) Error() string        { return errString(e.Err) }
func (e *ResourceError) Unwrap() error        { return e.Err }
func (e *ResourceError) Is(target error) bool { return target == ErrResource }

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// Classify returns the class of err and, for ClassAfter, the delay it asks
// for. context.Canceled anywhere in the chain wins: it is never retried. Past
// that, marks decide (see [Marked]): the outermost mark wins, so a layer can
// re-mark an error it wraps. An error with no mark that means the other side
// could not be reached or did not answer (a refused or reset connection, an
// unreachable host, a timeout, a temporary DNS failure, an unexpected EOF, a
// retryable gRPC status; the package's README has the table) is ClassTransient:
// an outage is not poison. Anything else, and nil, is Unclassified.
func Classify(err error) (Class, time.Duration) {
	if c, d := Marked(err); c != Unclassified {
		return c, d
	}
	if outage(err) {
		return ClassTransient, 0
	}
	return Unclassified, 0
}

// Marked returns the class err's marks give it, without inferring anything
// from what the error is: Unclassified when it carries no mark. A mark is one
// of Permanent, Transient, After and Resource, or an error that is or matches
// (through its own Is method) one of the sentinels ErrPermanent,
// ErrTransient, ErrAfter and ErrResource, so that
// fmt.Errorf("call payments: %w", retry.ErrTransient) is marked as
// retry.Transient(err) is. context.Canceled anywhere in the chain is
// ClassCanceled. An explicit-only policy classifies with Marked.
func Marked(err error) (Class, time.Duration) {
	if err == nil {
		return Unclassified, 0
	}
	if errors.Is(err, context.Canceled) {
		return ClassCanceled, 0
	}
	return classifyChain(err)
}

func classifyChain(err error) (Class, time.Duration) {
	for err != nil {
		if c, d, ok := markOf(err); ok {
			return c, d
		}
		switch e := err.(type) {
		case interface{ Unwrap() []error }:
			return classifyJoined(e.Unwrap())
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		default:
			return Unclassified, 0
		}
	}
	return Unclassified, 0
}

// markOf reads the mark of err itself, not of the errors it wraps.
func markOf(err error) (Class, time.Duration, bool) {
	switch e := err.(type) {
	case *PermanentError:
		return ClassPermanent, 0, true
	case *TransientError:
		return ClassTransient, 0, true
	case *AfterError:
		return ClassAfter, e.Delay, true
	case *ResourceError:
		return ClassResource, 0, true
	}
	is, _ := err.(interface{ Is(error) bool })
	for _, m := range sentinels {
		if err == m.err || (is != nil && is.Is(m.err)) {
			return m.class, 0, true
		}
	}
	return Unclassified, 0, false
}

// sentinels are the marks an error can carry by wrapping one of them, in the
// order they win: a permanent error stays permanent.
var sentinels = [...]struct {
	err   error
	class Class
}{
	{ErrPermanent, ClassPermanent},
	{ErrAfter, ClassAfter},
	{ErrResource, ClassResource},
	{ErrTransient, ClassTransient},
}

// classifyJoined classifies errors.Join and multi-%w errors: a permanent
// member makes the whole permanent; otherwise the first marked member decides.
func classifyJoined(errs []error) (Class, time.Duration) {
	best, delay := Unclassified, time.Duration(0)
	for _, e := range errs {
		c, d := classifyChain(e)
		if c == ClassPermanent {
			return c, 0
		}
		if best == Unclassified && c != Unclassified {
			best, delay = c, d
		}
	}
	return best, delay
}
