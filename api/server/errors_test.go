package server

import (
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/task"
)

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
