package client

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/retry/grpcretry"
)

// callDelays are the call layer's waits before its retries.
var callDelays = [...]time.Duration{50 * time.Millisecond, 100 * time.Millisecond}

// errBudgetSpent cuts a call whose channel layer would retry after the
// call's budget is spent.
var errBudgetSpent = errors.New("client: the call's retry budget is spent")

// callRetryable are the codes the call layer retries.
func callRetryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.Internal, codes.DeadlineExceeded:
		return true
	}
	return false
}

// attemptState is one call-layer attempt's bookkeeping, shared with the
// stats handler that sees each attempt the channel layer makes within it.
type attemptState struct {
	allowance *retry.Allowance
	cancel    context.CancelCauseFunc

	mu      sync.Mutex
	begun   int   // channel attempts that failed
	lastErr error // the error of the last channel attempt that ended
	spent   bool  // a channel retry found no budget: the call was cut
}

type attemptKey struct{}

// budgetStats sees every attempt the channel layer makes (gRPC's retries
// included, which no interceptor sees) and takes each retry from the
// call's allowance when the attempt before fails with a code the channel
// retries; when none is left it cuts the call during gRPC's backoff,
// before the retry is sent, and the call ends with the error of the
// attempt that failed. (A token taken for a retry gRPC then does not make,
// being throttled or at its cap, is lost: the budget errs on the side of
// fewer calls.)
type budgetStats struct{}

func (budgetStats) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (budgetStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (budgetStats) HandleConn(context.Context, stats.ConnStats) {}

func (budgetStats) HandleRPC(ctx context.Context, s stats.RPCStats) {
	st, _ := ctx.Value(attemptKey{}).(*attemptState)
	end, ok := s.(*stats.End)
	if st == nil || !ok || end.Error == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.spent {
		return // the cut itself
	}
	st.lastErr = end.Error
	st.begun++
	if ctx.Err() != nil || st.begun >= grpcretry.MaxAttempts || !slices.Contains(channelCodes, status.Code(end.Error)) {
		return // gRPC will not retry it
	}
	if !st.allowance.Take() {
		st.spent = true
		st.cancel(errBudgetSpent)
	}
}

// channelCodes are the codes the channel layer retries.
var channelCodes = grpcretry.Default().Codes

// unary is the call layer: it sends the token, puts a budget in the
// context if no outer layer did, and retries each attempt that failed
// with a retryable code while the budget lasts.
func (c *Client) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if c.cfg.Token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+c.cfg.Token)
	}
	ctx = retry.WithAllowance(ctx, c.callBudget())
	allowance := retry.AllowanceFrom(ctx)
	for n := 0; ; n++ {
		err := c.attempt(ctx, allowance, method, req, reply, cc, invoker, opts)
		if err == nil || n == len(callDelays) || !callRetryable(err) || ctx.Err() != nil || !allowance.Take() {
			return err
		}
		t := time.NewTimer(callDelays[n])
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// callBudget is the allowance of a call made on its own.
func (c *Client) callBudget() int {
	if c.cfg.SendRetries < 0 {
		return 0
	}
	return c.cfg.CallRetries
}

// attempt is one call-layer attempt, under its own deadline.
func (c *Client) attempt(ctx context.Context, allowance *retry.Allowance, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts []grpc.CallOption) error {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	actx, stop := context.WithTimeout(actx, c.cfg.Timeout)
	defer stop()
	st := &attemptState{allowance: allowance, cancel: cancel}
	err := invoker(context.WithValue(actx, attemptKey{}, st), method, req, reply, cc, opts...)
	if err != nil {
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.spent && st.lastErr != nil {
			return st.lastErr
		}
	}
	return err
}
