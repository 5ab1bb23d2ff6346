package grpcretry_test

import (
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/retry/grpcretry"
)

// TestRetryInfersTheRetryableCodes keeps retry's own list of the gRPC codes
// an outage shows as (retry imports no gRPC) equal to Retryable: a status
// error that reaches the engine unmarked, wrapped by the handler, is
// transient exactly when Classify would have marked it so.
func TestRetryInfersTheRetryableCodes(t *testing.T) {
	t.Parallel()
	for c := range codes.Code(20) {
		if c == codes.Canceled {
			continue // canceled is ClassCanceled, not transient; covered by Classify's tests
		}
		err := fmt.Errorf("charge card: %w", status.Error(c, "boom"))
		got, _ := retry.Classify(err)
		want := retry.Unclassified
		if grpcretry.Retryable(c) {
			want = retry.ClassTransient
		}
		if got != want {
			t.Errorf("retry.Classify(status %v, wrapped) = %v, want %v", c, got, want)
		}
	}
}
