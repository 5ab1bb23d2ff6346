package server

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grit-run/grit/task"
)

// statusOf turns the error of operation op into the status the client
// gets:
//
//   - a request that failed validation (FieldError), or task.ErrInvalid:
//     INVALID_ARGUMENT, the FieldError also as a google.rpc.BadRequest
//     detail;
//   - task.ErrNotFound: NOT_FOUND;
//   - task.ErrLeaseLost and task.ErrWrongState: FAILED_PRECONDITION (the
//     request was valid, the task is not in a state that allows it;
//     retrying the same request fails the same way);
//   - task.ErrDuplicate: ALREADY_EXISTS; a *task.KeyConflictError also
//     as a google.rpc.ErrorInfo detail (reason IDEMPOTENCY_KEY_CONFLICT,
//     metadata key, existing_task_id, existing_kind, differs);
//   - the request's own deadline or cancellation: DEADLINE_EXCEEDED or
//     CANCELED;
//   - a store that cannot be reached (a refused or broken connection, a
//     database shutting down): UNAVAILABLE, which clients retry;
//   - anything else: INTERNAL.
//
// An error that is a status already is returned as it is.
func statusOf(op string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(interface{ GRPCStatus() *status.Status }); ok {
		return err
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, op+": ") { // the store's errors often name the operation already
		msg = op + ": " + msg
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		st := status.New(codes.InvalidArgument, msg)
		if d, derr := st.WithDetails(&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{
			{Field: fe.Field, Description: fe.Problem},
		}}); derr == nil {
			st = d
		}
		return st.Err()
	}
	var kc *task.KeyConflictError
	if errors.As(err, &kc) {
		st := status.New(codes.AlreadyExists, msg)
		if d, derr := st.WithDetails(&errdetails.ErrorInfo{Reason: "IDEMPOTENCY_KEY_CONFLICT", Domain: "grit", Metadata: map[string]string{
			"key": kc.Key, "existing_task_id": strconv.FormatInt(kc.Existing, 10), "existing_kind": kc.Kind, "differs": kc.Differs,
		}}); derr == nil {
			st = d
		}
		return st.Err()
	}
	return status.Error(codeOf(err), msg)
}

func codeOf(err error) codes.Code {
	switch {
	case errors.Is(err, task.ErrInvalid):
		return codes.InvalidArgument
	case errors.Is(err, task.ErrNotFound):
		return codes.NotFound
	case errors.Is(err, task.ErrLeaseLost), errors.Is(err, task.ErrWrongState):
		return codes.FailedPrecondition
	case errors.Is(err, task.ErrDuplicate), errors.Is(err, task.ErrKeyConflict):
		return codes.AlreadyExists
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	case unreachable(err):
		return codes.Unavailable
	}
	return codes.Internal
}

// unreachable reports whether err says the store could not be reached,
// without naming a driver (the API never imports one): network errors,
// broken connections, and PostgreSQL's connection-exception and
// shutting-down states (by their SQLSTATE, which pgx's errors report).
func unreachable(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	for _, target := range []error{driver.ErrBadConn, io.ErrUnexpectedEOF, syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EPIPE} {
		if errors.Is(err, target) {
			return true
		}
	}
	var se interface{ SQLState() string }
	if errors.As(err, &se) {
		code := se.SQLState()
		switch {
		case strings.HasPrefix(code, "08"), // connection exception
			code == "57P01", code == "57P02", code == "57P03", // shutting down, cannot connect now
			code == "53300": // too many connections
			return true
		}
	}
	var sr interface{ SafeToRetry() bool }
	return errors.As(err, &sr) && sr.SafeToRetry()
}
