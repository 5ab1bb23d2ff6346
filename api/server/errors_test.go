package server

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"

	"google.golang.org/grpc/status"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/task"
)

// sqlState is an error of PostgreSQL's, as pgx reports its SQLSTATE.
type sqlState string

func (s sqlState) Error() string    { return "ERROR: could not extend file (SQLSTATE " + string(s) + ")" }
func (s sqlState) SQLState() string { return string(s) }

// TestDiskFullIsRetryable: a full disk, however the store says it
// (PostgreSQL's disk_full, ENOSPC), is UNAVAILABLE, which clients retry,
// reason STORE_FULL, with a message saying the disk is full. (The SQLite
// store's is tested through the binary: TestEnqueueOnFullDisk.)
func TestDiskFullIsRetryable(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		fmt.Errorf("enqueue: %w", sqlState("53100")),
		fmt.Errorf("enqueue: write grit.db-wal: %w", syscall.ENOSPC),
	} {
		st := status.Convert(statusOf("enqueue", err))
		if st.Code() != codes.Unavailable || !strings.Contains(st.Message(), "disk is full") {
			t.Errorf("%v: %v %q, want UNAVAILABLE saying the disk is full", err, st.Code(), st.Message())
		}
		if _, reason, _ := infoOf(err); reason != pb.ReasonStoreFull {
			t.Errorf("%v: reason %s, want %s", err, reason, pb.ReasonStoreFull)
		}
	}
	if code, _, _ := infoOf(sqlState("53200")); code != codes.Internal { // out of memory is not a full disk
		t.Errorf("SQLSTATE 53200: %v, want INTERNAL", code)
	}
}

// TestInfoOfErrorsNoCallReaches: the reasons of errors that no API call
// raises today, but a store may (the calls' reasons are tested over gRPC
// in reasons_test.go): they still get a code and reason of their own.
func TestInfoOfErrorsNoCallReaches(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err    error
		code   codes.Code
		reason string
	}{
		{fmt.Errorf("schedule %q: %w", "nightly", task.ErrNotFound), codes.NotFound, pb.ReasonNotFound},
		{fmt.Errorf("submit run: %w", task.ErrDuplicate), codes.AlreadyExists, pb.ReasonAlreadyExists},
		{fmt.Errorf("act: %w", &task.StateError{State: task.Success}), codes.FailedPrecondition, pb.ReasonWrongState},
		{fmt.Errorf("finish: %w", task.ErrLeaseLost), codes.FailedPrecondition, pb.ReasonLeaseLost},
		{fmt.Errorf("heartbeat: no worker: %w", task.ErrInvalid), codes.InvalidArgument, pb.ReasonInvalidArgument},
	} {
		code, reason, meta := infoOf(c.err)
		if code != c.code || reason != c.reason {
			t.Errorf("%v: %v %s, want %v %s", c.err, code, reason, c.code, c.reason)
		}
		if reason == pb.ReasonWrongState && meta["state"] != string(task.Success) {
			t.Errorf("%v: metadata %v, want the state %s", c.err, meta, task.Success)
		}
	}
}
