package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/internal/decide"
	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// A remote worker's result is recorded like a Go worker's: read the task
// the worker holds, decide with the engine's code, and Finish under the
// claim's lease token, which the store compares-and-sets. A result that
// was recorded already (the worker repeats a call whose answer was lost)
// is found on the attempt under that token and answered OK. Complete,
// Fail and Snooze are reports of one result (report.go).

func (x *workers) Complete(ctx context.Context, r *pb.CompleteRequest) (*pb.CompleteResponse, error) {
	const op = "complete"
	res, err := x.s.lim.result(r.GetWorkerId(), &pb.Result{TaskId: r.GetTaskId(), LeaseToken: r.GetLeaseToken(),
		End: &pb.Result_Complete{Complete: &pb.Completed{Output: r.GetOutput(), Quarantine: r.GetQuarantine(), Seen: r.GetSeen()}}})
	if err == nil {
		res.publish, err = x.s.lim.events("publish", r.GetPublish(), false)
	}
	if err != nil {
		return nil, statusOf(op, err)
	}
	e, err := x.s.one(ctx, r.GetWorkerId(), res)
	if err != nil {
		return nil, statusOf(op, aboutTask(r.GetTaskId(), err))
	}
	return &pb.CompleteResponse{Task: toTask(e.t, true)}, nil
}

func (x *workers) Fail(ctx context.Context, r *pb.FailRequest) (*pb.FailResponse, error) {
	const op = "fail"
	res, err := x.s.lim.result(r.GetWorkerId(), &pb.Result{TaskId: r.GetTaskId(), LeaseToken: r.GetLeaseToken(),
		End: &pb.Result_Fail{Fail: failedOf(r)}})
	if err != nil {
		return nil, statusOf(op, err)
	}
	e, err := x.s.one(ctx, r.GetWorkerId(), res)
	if err != nil {
		return nil, statusOf(op, aboutTask(r.GetTaskId(), err))
	}
	return &pb.FailResponse{Task: toTask(e.t, true), Decision: pb.DecisionOf(e.decision)}, nil
}

func (x *workers) Snooze(ctx context.Context, r *pb.SnoozeRequest) (*pb.SnoozeResponse, error) {
	const op = "snooze"
	res, err := x.s.lim.result(r.GetWorkerId(), &pb.Result{TaskId: r.GetTaskId(), LeaseToken: r.GetLeaseToken(),
		End: &pb.Result_Snooze{Snooze: &pb.Snoozed{Delay: r.GetDelay()}}})
	if err != nil {
		return nil, statusOf(op, err)
	}
	e, err := x.s.one(ctx, r.GetWorkerId(), res)
	if err != nil {
		return nil, statusOf(op, aboutTask(r.GetTaskId(), err))
	}
	return &pb.SnoozeResponse{Task: toTask(e.t, true)}, nil
}

// failedOf is a Fail's failure as a Report carries it.
func failedOf(r *pb.FailRequest) *pb.Failed {
	return &pb.Failed{ErrorClass: r.GetErrorClass(), Message: r.GetMessage(), RetryAfter: r.GetRetryAfter(), ExitCode: r.ExitCode,
		Signal: r.GetSignal(), Output: r.GetOutput(), Policy: r.GetPolicy(), RetryPolicy: r.GetRetryPolicy(), Catch: r.GetCatch()}
}

// failureOf is the outcome of the attempt a Fail reports, and its error,
// marked with its class as a Go handler would mark it (after is the
// delay of class AFTER). A process's exit (or signal) is an
// *decide.ExitError, fingerprinted by its status and the last line of
// message, as the engine fingerprints process tasks; an unclassified exit
// 75 (EX_TEMPFAIL) is transient.
func failureOf(r *pb.Failed, after time.Duration) (task.Outcome, error) {
	err := reported(r.GetMessage())
	if r.ExitCode != nil || r.GetSignal() != "" {
		x := &decide.ExitError{Code: -1, Signal: r.GetSignal(), Stderr: []byte(r.GetMessage())}
		if r.ExitCode != nil {
			x.Code = int(r.GetExitCode())
		}
		err = x
	}
	switch r.GetErrorClass() {
	case pb.ErrorClass_ERROR_CLASS_TRANSIENT:
		return task.OutcomeError, retry.Transient(err)
	case pb.ErrorClass_ERROR_CLASS_PERMANENT:
		return task.OutcomeError, retry.Permanent(err)
	case pb.ErrorClass_ERROR_CLASS_RESOURCE:
		return task.OutcomeError, retry.Resource(err)
	case pb.ErrorClass_ERROR_CLASS_AFTER:
		return task.OutcomeError, retry.After(err, after)
	case pb.ErrorClass_ERROR_CLASS_TIMEOUT:
		return task.OutcomeTimeout, retry.Transient(err) // never poison: the bug may be the timeout
	}
	if r.ExitCode != nil && r.GetExitCode() == decide.ExitTempFail {
		return task.OutcomeError, retry.Transient(err)
	}
	return task.OutcomeError, err
}

// policy is the task's retry policy: its own, else the one the worker
// reporting the failure has for the task's kind (worker, checked with the
// request), else the default, as for a Go worker's handler without one.
func (s *Server) policy(t task.Task, worker string) retry.Policy {
	def := retry.CommonFourTimes
	if worker != "" {
		if p, err := retry.Parse(worker); err == nil {
			def = p
		}
	}
	p, err := decide.Policy(t, def)
	if err != nil {
		s.cfg.Logger.Error("task has a bad retry policy; using the worker's or the default", "task", t.ID, "err", err)
	}
	return p
}

// held returns the task worker reports on. When the task is no longer
// RUNNING under token, rec is the attempt under token if it ended with one
// of want (the report was recorded before: answer OK); otherwise the error
// is task.ErrLeaseLost, saying what happened. A report refused so is counted
// as a stale result (Config.Metrics). A worker that names itself
// must be the one that holds, or held, the lease; one that does not
// (written before reports named their worker) is checked by the token
// alone, which is unique in the store.
func (s *Server) held(ctx context.Context, worker string, id, token int64, want ...task.Outcome) (t task.Task, rec *task.Attempt, err error) {
	t, err = s.cfg.Store.GetTask(ctx, id)
	if err != nil {
		return t, nil, err
	}
	defer func() {
		if errors.Is(err, task.ErrLeaseLost) {
			s.cfg.Metrics.Stale(&t)
		}
	}()
	if t.State == task.Running && t.LeaseToken == token {
		if worker != "" && t.LeaseOwner != worker {
			return t, nil, notHolder(t, token, t.LeaseOwner, worker)
		}
		return t, nil, nil
	}
	as, err := s.cfg.Store.Attempts(ctx, id)
	if err != nil {
		return t, nil, err
	}
	i := slices.IndexFunc(as, func(a task.Attempt) bool { return a.LeaseToken == token })
	if i >= 0 && worker != "" && as[i].Worker != worker {
		return t, nil, notHolder(t, token, as[i].Worker, worker)
	}
	if i >= 0 && slices.Contains(want, as[i].Outcome) {
		return t, &as[i], nil
	}
	return t, nil, leaseLost(t, token, as, i)
}

// notHolder refuses a report from a worker that does not hold the lease
// it names: a worker that mixed up its tasks, or another worker's.
func notHolder(t task.Task, token int64, holder, worker string) error {
	return &leaseError{task: t.ID, token: token, state: t.State, holder: holder,
		msg: fmt.Sprintf("task %d, lease token %d: the lease is held by worker %q, not %q: the result is not recorded", t.ID, token, holder, worker)}
}

func leaseLost(t task.Task, token int64, as []task.Attempt, i int) error {
	var why string
	switch {
	case i >= 0 && as[i].Outcome == task.OutcomeRunning:
		why = fmt.Sprintf("the task is %s under lease token %d", t.State, t.LeaseToken)
	case i >= 0:
		why = fmt.Sprintf("its attempt under that token ended %s; the task is %s", as[i].Outcome, t.State)
	case i < 0 && as != nil:
		// Tokens are unique in the store: this one is another task's, or
		// none's.
		why = fmt.Sprintf("the task never had that token, another task's or none's (its latest is %d)", t.LeaseToken)
	default:
		why = fmt.Sprintf("the task is %s under lease token %d", t.State, t.LeaseToken)
	}
	return &leaseError{task: t.ID, token: token, state: t.State,
		msg: fmt.Sprintf("task %d, lease token %d: %s: stop working it, the result is not recorded", t.ID, token, why)}
}

// release gives back claimed tasks: READY at once, the attempt not
// counted, their failure record kept. It returns the leases that were
// lost.
func (s *Server) release(ctx context.Context, worker string, ts []task.Task) ([]store.Lease, error) {
	if len(ts) == 0 {
		return nil, nil
	}
	now, err := s.cfg.Store.Now(ctx)
	if err != nil {
		return nil, err
	}
	fs := make([]store.Finish, len(ts))
	for i, t := range ts {
		f := gate.BaseFinish(t)
		f.State, f.NextAt, f.Refund = task.Ready, now, true
		f.Attempt.Outcome, f.Attempt.Error = task.OutcomeReleased, "released: worker "+worker+" gave the task back"
		s.spans.end(&f)
		s.quar.end(f.Token, now, s.alerts.Send)
		fs[i] = f
	}
	errs, err := s.cfg.Store.Finish(ctx, fs)
	if err != nil {
		return nil, err
	}
	ends := make([]gate.End, len(ts))
	for i := range ts {
		ends[i] = gate.End{Task: &ts[i], Finish: &fs[i], Err: errs[i]}
	}
	s.gate.Ended(ctx, worker, ends)
	var lost []store.Lease
	for i, e := range errs {
		switch {
		case e == nil:
		case errors.Is(e, task.ErrLeaseLost):
			lost = append(lost, store.Lease{TaskID: fs[i].TaskID, Token: fs[i].Token})
		default:
			return nil, e
		}
	}
	s.wake.notify()
	return lost, nil
}

func isNotFound(err error) bool { return errors.Is(err, task.ErrNotFound) }
