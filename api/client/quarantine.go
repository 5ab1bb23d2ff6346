package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/retry"
)

// A remote worker's handler sets a bad row aside as a Go handler does
// with grit.Quarantine: the worker gives the handler a context from
// WithAttempt, the handler calls Quarantine(ctx, item, err) for each bad
// row and Saw(ctx, n) for the rows it saw, and the worker reports the
// attempt's success with Completed(ctx, output), which carries the
// handler's policy and the count, for the server to judge.

// ErrTooManyQuarantined is matched by Quarantine's error once the task
// has set aside more items than its handler's policy tolerates (its
// max): fail the task with ERROR_CLASS_PERMANENT and the error's
// message. The items stay quarantined.
var ErrTooManyQuarantined = errors.New("client: more items quarantined than the handler tolerates")

// ErrNoAttempt is matched by the error of Quarantine, Saw or Completed
// given a context that WithAttempt did not make.
var ErrNoAttempt = errors.New("client: the context carries no attempt")

type handlerKey struct{}

// attempt is what WithAttempt puts in a handler's context.
type attempt struct {
	c      *Client
	worker string
	task   *gritv1.Task
	pol    *gritv1.QuarantinePolicy
	seen   atomic.Int64
}

// WithAttempt returns ctx carrying the attempt of t (as the claim gave
// it, with its lease token) that worker works, and pol, its handler's
// quarantine policy for t's kind (nil: its items cannot be replayed, only
// dropped, and any number is tolerated): give it to the handler, for
// Quarantine and Saw, and report the attempt's success with Completed.
func (c *Client) WithAttempt(ctx context.Context, worker string, t *gritv1.Task, pol *gritv1.QuarantinePolicy) context.Context {
	return context.WithValue(ctx, handlerKey{}, &attempt{c: c, worker: worker, task: t, pol: pol})
}

func attemptOf(ctx context.Context, op string) (*attempt, error) {
	a, ok := ctx.Value(handlerKey{}).(*attempt)
	if !ok {
		return nil, fmt.Errorf("%s: %w: give it the context Client.WithAttempt made for the handler", op, ErrNoAttempt)
	}
	return a, nil
}

// Quarantine sets item aside, with err, inside a remote worker's handler
// (ctx from WithAttempt), and lets the task go on, as grit.Quarantine
// does in a Go handler: the item, as JSON, is recorded durably with err's
// message and its fingerprint (the server's, numbers and ids masked), and
// waits beside the dead letters, grouped by fingerprint, for an operator
// to replay it (as a task of the policy's kind, with the item as its
// args) or drop it. A task sets an item (the same JSON) aside once,
// however many of its attempts do; each attempt that sets items aside
// raises one alert.
//
// The error is nil; or, matching ErrTooManyQuarantined and permanent
// (retry.Permanent), the server's verdict once the task is past its
// policy's max (fail the task, ERROR_CLASS_PERMANENT, with its message);
// or why the item was not recorded: it is not JSON, or over 256 KiB (set aside a reference to it), or the
// lease was lost (FAILED_PRECONDITION: stop working the task).
func Quarantine(ctx context.Context, item any, err error) error {
	a, aerr := attemptOf(ctx, "client: quarantine")
	if aerr != nil {
		return aerr
	}
	if err == nil {
		return errors.New("client: quarantine: an item with no error: give the error that made it bad")
	}
	b, merr := json.Marshal(item)
	if merr != nil {
		return retry.Permanent(fmt.Errorf("client: quarantine: the item does not encode as JSON: %w", merr))
	}
	resp, rerr := a.c.workers.Quarantine(ctx, &gritv1.QuarantineRequest{WorkerId: a.worker, TaskId: a.task.GetId(), LeaseToken: a.task.GetLeaseToken(),
		Items: []*gritv1.QuarantineItem{{Item: b, Error: err.Error()}}, Policy: a.pol})
	if rerr != nil {
		return fmt.Errorf("client: quarantine an item of task %d: %w", a.task.GetId(), rerr)
	}
	if resp.GetTooMany() {
		return retry.Permanent(fmt.Errorf("%w: %s", ErrTooManyQuarantined, resp.GetVerdict()))
	}
	return nil
}

// Saw reports, inside a remote worker's handler (ctx from WithAttempt),
// that its attempt saw n more items: the measure of the policy's
// max_share, which Completed carries.
func Saw(ctx context.Context, n int) error {
	a, err := attemptOf(ctx, "client: saw")
	if err != nil {
		return err
	}
	a.seen.Add(int64(max(n, 0)))
	return nil
}

// Completed is the result that reports the success of the attempt ctx
// carries (from WithAttempt), with output, for Report or SendResult: it
// carries the handler's quarantine policy and the items it saw, and the
// server records a task past the policy as FAILED, permanently, as a Go
// handler's would be.
func Completed(ctx context.Context, output string) (*gritv1.Result, error) {
	a, err := attemptOf(ctx, "client: completed")
	if err != nil {
		return nil, err
	}
	return &gritv1.Result{TaskId: a.task.GetId(), LeaseToken: a.task.GetLeaseToken(),
		End: &gritv1.Result_Complete{Complete: &gritv1.Completed{Output: output, Quarantine: a.pol, Seen: a.seen.Load()}}}, nil
}
