package server

import (
	"cmp"
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
	"google.golang.org/protobuf/protoadapt"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// statusOf turns the error of operation op into the status the client
// gets: its code and message, and a google.rpc.ErrorInfo (domain "grit")
// whose reason and metadata infoOf decides, so that a client in any
// language tells errors apart without reading messages. A request that
// failed validation (FieldError) also has a google.rpc.BadRequest naming
// the field.
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
	code, reason, meta := infoOf(err)
	if reason == pb.ReasonStoreFull && !strings.Contains(msg, "disk is full") {
		msg += ": the store's disk is full: free some space, then try again"
	}
	details := []protoadapt.MessageV1{&errdetails.ErrorInfo{Reason: reason, Domain: pb.ErrorDomain, Metadata: meta}}
	var fe *FieldError
	if errors.As(err, &fe) {
		details = append(details, &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{
			{Field: fe.Field, Description: fe.Problem},
		}})
	}
	st := status.New(code, msg)
	if d, derr := st.WithDetails(details...); derr == nil {
		st = d
	}
	return st.Err()
}

// infoOf decides err's code, and the reason and metadata of its
// ErrorInfo: the one place where an error becomes what a client tells
// apart (the reasons are listed in api/gritv1 and docs/api.md).
//
//   - a refusal: its own;
//   - a FieldError, or task.ErrInvalid: INVALID_ARGUMENT (the
//     FieldError's reason, by default INVALID_ARGUMENT; metadata field);
//   - task.ErrNotFound: NOT_FOUND, the reason naming what was not found
//     when the error is described so (TASK_NOT_FOUND...);
//   - task.ErrLeaseLost and task.ErrWrongState: FAILED_PRECONDITION (the
//     request was valid, the task is not in a state that allows it;
//     retrying the same request fails the same way): LEASE_LOST,
//     LEASE_HELD_BY_OTHER or WRONG_STATE;
//   - task.ErrRefused: FAILED_PRECONDITION, RESULT_REFUSED (the store's
//     database refused that result alone, until what refuses it is
//     fixed);
//   - task.ErrDuplicate: ALREADY_EXISTS; a *task.KeyConflictError is
//     IDEMPOTENCY_KEY_CONFLICT (metadata key, existing_task_id,
//     existing_kind, differs);
//   - the request's own deadline or cancellation: DEADLINE_EXCEEDED or
//     CANCELED (reason CANCELLED, spelled as grit's state is);
//   - a store that cannot be reached (a refused or broken connection, a
//     database shutting down): UNAVAILABLE, which clients retry (reason
//     STORE_UNAVAILABLE);
//   - a store whose disk is full: UNAVAILABLE (reason STORE_FULL), which
//     clients retry: the same call succeeds once space is freed;
//   - anything else: INTERNAL.
//
// The metadata also has what the error is described with on its way up
// (described: task_id, state...).
func infoOf(err error) (codes.Code, string, map[string]string) {
	meta, notFound := describedAs(err)
	var (
		rf *refusal
		fe *FieldError
		le *leaseError
		kc *task.KeyConflictError
		se *task.StateError
	)
	switch {
	case errors.As(err, &rf):
		for k, v := range rf.meta {
			meta[k] = v
		}
		return rf.code, rf.reason, meta
	case errors.As(err, &fe):
		meta["field"] = fe.Field
		return codes.InvalidArgument, cmp.Or(fe.Reason, pb.ReasonInvalidArgument), meta
	case errors.Is(err, task.ErrInvalid):
		return codes.InvalidArgument, pb.ReasonInvalidArgument, meta
	case errors.Is(err, task.ErrNotFound):
		return codes.NotFound, notFound, meta
	case errors.As(err, &le):
		return codes.FailedPrecondition, le.describe(meta), meta
	case errors.Is(err, task.ErrLeaseLost):
		return codes.FailedPrecondition, pb.ReasonLeaseLost, meta
	case errors.Is(err, task.ErrRefused):
		return codes.FailedPrecondition, pb.ReasonResultRefused, meta
	case errors.Is(err, task.ErrWrongState):
		if errors.As(err, &se) {
			meta["state"] = string(se.State)
		}
		return codes.FailedPrecondition, pb.ReasonWrongState, meta
	case errors.As(err, &kc):
		meta["key"], meta["existing_task_id"], meta["existing_kind"], meta["differs"] = kc.Key, strconv.FormatInt(kc.Existing, 10), kc.Kind, kc.Differs
		return codes.AlreadyExists, pb.ReasonIdempotencyKeyConflict, meta
	case errors.Is(err, task.ErrDuplicate), errors.Is(err, task.ErrKeyConflict):
		return codes.AlreadyExists, pb.ReasonAlreadyExists, meta
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded, pb.ReasonDeadlineExceeded, meta
	case errors.Is(err, context.Canceled):
		return codes.Canceled, pb.ReasonCancelled, meta
	case diskFull(err):
		return codes.Unavailable, pb.ReasonStoreFull, meta
	case unreachable(err):
		return codes.Unavailable, pb.ReasonStoreUnavailable, meta
	}
	return codes.Internal, pb.ReasonInternal, meta
}

// describedAs gathers what err is described with on its way up: the
// metadata, and the reason of a NOT_FOUND (the outermost description
// wins).
func describedAs(err error) (meta map[string]string, notFound string) {
	meta, notFound = map[string]string{}, pb.ReasonNotFound
	walk(err, func(e error) {
		if d, ok := e.(*described); ok {
			for k, v := range d.meta {
				if _, set := meta[k]; !set {
					meta[k] = v
				}
			}
			if d.notFound != "" && notFound == pb.ReasonNotFound {
				notFound = d.notFound
			}
		}
	})
	return meta, notFound
}

// walk calls fn on err and every error it wraps.
func walk(err error, fn func(error)) {
	if err == nil {
		return
	}
	fn(err)
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		walk(u.Unwrap(), fn)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			walk(e, fn)
		}
	}
}

// refusal is an error the server decides itself before any store is
// asked (a token, a busy server, a store without a feature, a panic),
// with its code, reason and metadata. Its message is the whole status
// message.
type refusal struct {
	code   codes.Code
	reason string
	meta   map[string]string
	msg    string
}

func (r *refusal) Error() string { return r.msg }

// refuse is the status of a refusal by operation op (a method's full
// name, or an operation's name, which msg starts with).
func refuse(op string, code codes.Code, reason, msg string, meta map[string]string) error {
	return statusOf(op, &refusal{code: code, reason: reason, meta: meta, msg: msg})
}

// unsupported refuses a call that needs what the server's store lacks
// (feature: "topics", "steps", "pauses", "machines").
func unsupported(op, feature, msg string) error {
	return refuse(op, codes.Unimplemented, pb.ReasonStoreUnsupported, msg, map[string]string{"feature": feature})
}

// described is an error with what its ErrorInfo says of it: metadata
// (task_id, state...) and, when it is task.ErrNotFound, the reason naming
// what was not found. Its message is its cause's.
type described struct {
	err      error
	notFound string
	meta     map[string]string
}

func (d *described) Error() string { return d.err.Error() }
func (d *described) Unwrap() error { return d.err }

// aboutTask describes err as about task id: its ErrorInfo has task_id,
// and a NOT_FOUND is TASK_NOT_FOUND.
func aboutTask(id int64, err error) error {
	if err == nil {
		return nil
	}
	return &described{err: err, notFound: pb.ReasonTaskNotFound, meta: map[string]string{"task_id": strconv.FormatInt(id, 10)}}
}

// aboutRun describes err as about run id: its ErrorInfo has run_id, and
// a NOT_FOUND is RUN_NOT_FOUND.
func aboutRun(id int64, err error) error {
	if err == nil {
		return nil
	}
	return &described{err: err, notFound: pb.ReasonRunNotFound, meta: map[string]string{"run_id": strconv.FormatInt(id, 10)}}
}

// aboutInstance describes err as about the instance of machine with key:
// its ErrorInfo has machine and key, and a NOT_FOUND is
// INSTANCE_NOT_FOUND.
func aboutInstance(machine, key string, err error) error {
	if err == nil {
		return nil
	}
	return &described{err: err, notFound: pb.ReasonInstanceNotFound, meta: map[string]string{"machine": machine, "key": key}}
}

// withState describes err with the state the task is in.
func withState(s task.State, err error) error {
	return &described{err: err, meta: map[string]string{"state": string(s)}}
}

// leaseError is task.ErrLeaseLost with what a worker's program needs:
// the task, the token it sent, the task's state, and the worker that
// holds (or held) the lease under that token when it is another.
type leaseError struct {
	task, token int64
	state       task.State // "" when not known
	holder      string     // another worker's id; "" when the lease is simply no longer current
	msg         string     // what happened; Error adds the sentinel's message
}

func (e *leaseError) Error() string        { return e.msg + ": " + task.ErrLeaseLost.Error() }
func (e *leaseError) Is(target error) bool { return target == task.ErrLeaseLost }

// describe adds e's metadata to meta and returns its reason.
func (e *leaseError) describe(meta map[string]string) string {
	meta["task_id"], meta["lease_token"] = strconv.FormatInt(e.task, 10), strconv.FormatInt(e.token, 10)
	if e.state != "" {
		meta["state"] = string(e.state)
	}
	if e.holder != "" {
		meta["holder"] = e.holder
		return pb.ReasonLeaseHeldByOther
	}
	return pb.ReasonLeaseLost
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

// diskFull reports whether err says the store's disk is full, without
// naming a driver: store.ErrFull (the SQLite store's), ENOSPC, and
// PostgreSQL's disk_full (SQLSTATE 53100).
func diskFull(err error) bool {
	if errors.Is(err, store.ErrFull) || errors.Is(err, syscall.ENOSPC) {
		return true
	}
	var se interface{ SQLState() string }
	return errors.As(err, &se) && se.SQLState() == "53100"
}
