package grpcretry

import (
	"context"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grit-run/grit/retry"
)

// MaxRetryDelay caps the delay a server can ask for with RetryInfo. A longer
// hint (a bug, or a quota that resets tomorrow) would park the task for that
// long; past an hour grit tries again and lets the server answer anew.
const MaxRetryDelay = time.Hour

// Classify marks err with the [retry] mark for its gRPC status code, so that
// [retry.Classify] and the engine treat it as the code deserves:
//
//   - nil, or a status of OK: nil.
//   - an error already marked ([retry.Marked] is not Unclassified): err as
//     it is, so a handler's own mark wins.
//   - a status whose details hold a google.rpc.RetryInfo with a retry_delay,
//     unless the code is [Permanent] or CANCELED: [retry.After] with that
//     delay, at least 0 and at most [MaxRetryDelay].
//   - a [Retryable] code: [retry.Transient].
//   - a [Permanent] code: [retry.Permanent].
//   - CANCELED: an error that matches context.Canceled with errors.Is (its
//     message unchanged), which [retry.Classify] reports as ClassCanceled:
//     the call was given up, by this side or the server's, and retrying
//     would undo that.
//   - UNKNOWN, codes gRPC does not define, and errors that are not gRPC
//     statuses: err as it is, left to the retry policy and poison detection.
//
// The original error stays reachable: status.Code, status.FromError and
// errors.As see through the marks. As for any wrapped status error,
// status.FromError then reports err.Error() as the message ("rpc error: code
// = ... desc = ..."); errors.As to an interface{ GRPCStatus() *status.Status }
// gives the status exactly as it was.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	if class, _ := retry.Marked(err); class != retry.Unclassified {
		return err
	}
	s, ok := status.FromError(err)
	if !ok {
		return err
	}
	code := s.Code()
	switch {
	case code == codes.OK:
		return nil
	case code == codes.Canceled:
		return &canceledError{err: err}
	case Permanent(code):
		return retry.Permanent(err)
	}
	if d, ok := retryDelay(s); ok {
		return retry.After(err, d)
	}
	if Retryable(code) {
		return retry.Transient(err)
	}
	return err
}

// retryDelay returns the retry_delay of the first RetryInfo in s's details,
// clamped to [0, MaxRetryDelay].
func retryDelay(s *status.Status) (time.Duration, bool) {
	for _, d := range s.Details() {
		info, ok := d.(*errdetails.RetryInfo)
		if !ok || info.GetRetryDelay() == nil {
			continue
		}
		return min(max(info.GetRetryDelay().AsDuration(), 0), MaxRetryDelay), true
	}
	return 0, false
}

// canceledError makes a CANCELED status match context.Canceled without
// changing its message, which a "%w: %w" wrap would prefix with "context
// canceled: ". Its GRPCStatus hands status.FromError the status as it was.
type canceledError struct{ err error }

func (e *canceledError) GRPCStatus() *status.Status { return status.Convert(e.err) }
func (e *canceledError) Error() string              { return e.err.Error() }
func (e *canceledError) Unwrap() error              { return e.err }
func (e *canceledError) Is(target error) bool       { return target == context.Canceled }
