package client

import (
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"

	"github.com/grit-run/grit/api/gritv1"
)

// ErrorInfo is the google.rpc.ErrorInfo a grit server's error carries
// (domain "grit"): its reason and metadata (task_id, lease_token,
// state...); nil when err is not such an error (nil, a local error, or a
// status from elsewhere). It finds the status through wrapping.
func ErrorInfo(err error) *errdetails.ErrorInfo {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return nil
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == gritv1.ErrorDomain {
			return info
		}
	}
	return nil
}

// Reason is the reason of err's ErrorInfo, one of the gritv1.Reason*
// constants (e.g. gritv1.ReasonLeaseLost: stop working the task); "" when
// err carries none. docs/api.md lists them and what to do for each.
func Reason(err error) string { return ErrorInfo(err).GetReason() }
