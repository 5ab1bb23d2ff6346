package client_test

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grit-run/grit/api/client"
	"github.com/grit-run/grit/api/gritv1"
)

func TestReason(t *testing.T) {
	t.Parallel()
	st, err := status.New(codes.FailedPrecondition, "complete: task 7, lease token 3: stop working it").WithDetails(
		&errdetails.ErrorInfo{Domain: "grit", Reason: gritv1.ReasonLeaseLost, Metadata: map[string]string{"task_id": "7"}})
	if err != nil {
		t.Fatal(err)
	}
	wrapped := fmt.Errorf("report task 7: %w", st.Err())
	if got := client.Reason(wrapped); got != gritv1.ReasonLeaseLost {
		t.Errorf("Reason = %q, want %s", got, gritv1.ReasonLeaseLost)
	}
	if got := client.ErrorInfo(wrapped).GetMetadata()["task_id"]; got != "7" {
		t.Errorf("task_id = %q, want 7", got)
	}
	other, _ := status.New(codes.NotFound, "x").WithDetails(&errdetails.ErrorInfo{Domain: "example.com", Reason: "TASK_NOT_FOUND"})
	for _, e := range []error{nil, errors.New("local"), status.Error(codes.Unavailable, "no details"), other.Err()} {
		if got := client.Reason(e); got != "" {
			t.Errorf("Reason(%v) = %q, want none", e, got)
		}
	}
}
