package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/status"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/internal/decide"
	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// result is how one attempt ended, checked, on its way to the store.
type result struct {
	r       *pb.Result
	publish []task.Event  // a Complete's events
	after   time.Duration // a failure's delay of class AFTER
	delay   time.Duration // a snooze's
	err     error         // its check's: answered with it, not recorded
	// verdict is a complete's past its worker's quarantine policy
	// (judge): recorded as a permanent failure.
	verdict error
}

// op names the single call that reports r, for its errors' messages.
func (r result) op() string {
	switch r.r.GetEnd().(type) {
	case *pb.Result_Complete:
		return "complete"
	case *pb.Result_Fail:
		return "fail"
	case *pb.Result_Snooze:
		return "snooze"
	}
	return "report"
}

// outcomes are the outcomes of an attempt under which r was recorded
// before (a repeated report).
func (r result) outcomes() []task.Outcome {
	switch e := r.r.GetEnd().(type) {
	case *pb.Result_Complete:
		if e.Complete.GetQuarantine() != nil { // judged, it may have failed
			return []task.Outcome{task.OutcomeSuccess, task.OutcomeError}
		}
		return []task.Outcome{task.OutcomeSuccess}
	case *pb.Result_Fail:
		return []task.Outcome{task.OutcomeError, task.OutcomeTimeout}
	}
	return []task.Outcome{task.OutcomeSnoozed}
}

// ended is what a result came to: the task after it and the decision of a
// failure, or why it was not recorded.
type ended struct {
	t        task.Task
	decision string
	err      error
}

func (x *workers) Report(ctx context.Context, r *pb.ReportRequest) (*pb.ReportResponse, error) {
	const op = "report"
	rs, err := x.s.lim.report(r)
	if err != nil {
		return nil, statusOf(op, err)
	}
	es, err := x.s.record(ctx, r.GetWorkerId(), rs)
	if err != nil {
		return nil, statusOf(op, err)
	}
	out := &pb.ReportResponse{Answers: make([]*pb.ReportAnswer, len(es))}
	for i, e := range es {
		if e.err != nil {
			out.Answers[i] = &pb.ReportAnswer{Status: status.Convert(statusOf(rs[i].op(), aboutTask(rs[i].r.GetTaskId(), e.err))).Proto()}
			continue
		}
		t := toTask(e.t, false)
		t.LastError = "" // the request's own message, or an earlier one: Get has it
		out.Answers[i] = &pb.ReportAnswer{Task: t, Decision: pb.DecisionOf(e.decision)}
	}
	return out, nil
}

// one records a single call's result; its refusal is the call's error.
func (s *Server) one(ctx context.Context, worker string, r result) (ended, error) {
	es, err := s.record(ctx, worker, []result{r})
	if err != nil {
		return ended{}, err
	}
	return es[0], es[0].err
}

// record decides and records the results worker reports (every single
// report comes this way too), and answers each in order. It reads the
// tasks in one call, the store's clock once, and records every result
// whose lease the worker holds in one Finish; the answer is the task as
// that Finish left it (store.Finish.Applied), not read again. A result
// whose task is not RUNNING under its token, or not the worker's, takes
// the slow path (held), which reads the task's attempts to tell a report
// recorded before from a stale one. A result the store refuses alone
// (task.ErrRefused: a trigger, a constraint) is answered with its own
// error, and the others are recorded: the store's Finish finds it
// (store.Isolate), as it does for a Go worker's results. The error is for
// what spoils every result: the store failed, and nothing was recorded.
func (s *Server) record(ctx context.Context, worker string, rs []result) ([]ended, error) {
	out := make([]ended, len(rs))
	byID, err := s.heldTasks(ctx, rs)
	if err != nil {
		return nil, err
	}
	var ts []task.Task
	var items []int
	for i, r := range rs {
		id, token := r.r.GetTaskId(), r.r.GetLeaseToken()
		t, found := byID[id]
		switch {
		case r.err != nil:
			out[i].err = r.err
		case !found:
			out[i].err = aboutTask(id, fmt.Errorf("task %d: %w", id, task.ErrNotFound))
		case t.State == task.Running && t.LeaseToken == token && (worker == "" || t.LeaseOwner == worker):
			ts, items = append(ts, t), append(items, i)
		default:
			out[i] = s.recordedBefore(ctx, worker, r)
		}
	}
	if len(items) == 0 {
		return out, nil
	}
	if err := s.judge(ctx, rs, items, ts); err != nil {
		return nil, err
	}
	now, err := s.cfg.Store.Now(ctx)
	if err != nil {
		return nil, err
	}
	fs := make([]store.Finish, len(items))
	for j, i := range items {
		fs[j] = s.decide(ts[j], rs[i], now)
		s.gate.Ending(ctx, &ts[j], &fs[j])
		s.auto.record(ts[j], &fs[j])
		s.spans.end(&fs[j])
		s.quar.end(fs[j].Token, now, s.alerts.Send)
	}
	errs, err := s.cfg.Store.Finish(ctx, fs)
	if err != nil {
		return nil, err
	}
	s.answer(ctx, out, items, ts, fs, errs, now)
	return out, nil
}

// heldTasks reads the tasks rs name, in one call.
func (s *Server) heldTasks(ctx context.Context, rs []result) (map[int64]task.Task, error) {
	ids := make([]int64, 0, len(rs))
	for _, r := range rs {
		if r.err == nil {
			ids = append(ids, r.r.GetTaskId())
		}
	}
	byID := make(map[int64]task.Task, len(ids))
	if len(ids) == 0 {
		return byID, nil
	}
	ts, err := s.cfg.Store.ListTasks(ctx, task.Filter{IDs: ids})
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		byID[t.ID] = t
	}
	return byID, nil
}

// decide is the end of t's attempt that r reports, decided by the
// engine's code.
func (s *Server) decide(t task.Task, r result, now time.Time) store.Finish {
	f := gate.BaseFinish(t)
	switch e := r.r.GetEnd().(type) {
	case *pb.Result_Complete:
		if r.verdict != nil {
			f.Attempt.Outcome, f.Attempt.Output = task.OutcomeError, e.Complete.GetOutput()
			decide.Failure(&f, t, r.verdict, s.policy(t, ""), now)
			break
		}
		f.State, f.Attempt.Outcome, f.Attempt.Output, f.Publish = task.Success, task.OutcomeSuccess, e.Complete.GetOutput(), r.publish
	case *pb.Result_Fail:
		outcome, cause := failureOf(e.Fail, r.after)
		f.Attempt.Outcome = outcome
		decide.Failure(&f, t, cause, s.policy(t, e.Fail.GetPolicy()), now)
		decide.Catch(t, &f, e.Fail.GetCatch(), "")
		f.Attempt.Output, f.Attempt.Signal = e.Fail.GetOutput(), e.Fail.GetSignal()
		if e.Fail.ExitCode != nil {
			code := int(e.Fail.GetExitCode())
			f.Attempt.ExitCode = &code
		}
	case *pb.Result_Snooze:
		_ = decide.Snooze(&f, t, r.delay, 0, now) // a remote worker's snoozes have no bound: nothing to fail
	}
	return f
}

// recordedBefore answers a result whose lease the worker does not hold
// now: OK if it was recorded before under its token, else why not.
func (s *Server) recordedBefore(ctx context.Context, worker string, r result) ended {
	t, rec, err := s.held(ctx, worker, r.r.GetTaskId(), r.r.GetLeaseToken(), r.outcomes()...)
	switch {
	case err != nil:
		return ended{t: t, err: err}
	case rec == nil:
		// RUNNING under the token now but not when read a moment ago:
		// tokens are never reused, so the store answered two reads
		// inconsistently.
		return ended{t: t, err: fmt.Errorf("task %d, lease token %d: the task changed while the result was read; report it again", t.ID, r.r.GetLeaseToken())}
	}
	return ended{t: t, decision: rec.Decision}
}

// answer fills out[items[j]] with what the store's Finish made of fs[j],
// for ts[j], and tells the gate and the waiting claims, as the engine does
// for a Go worker's results.
func (s *Server) answer(ctx context.Context, out []ended, items []int, ts []task.Task, fs []store.Finish, errs []error, now time.Time) {
	byOwner := map[string][]gate.End{}
	wake := false
	for j, i := range items {
		if errs[j] != nil {
			out[i] = s.lost(ctx, ts[j], fs[j], errs[j])
			continue
		}
		out[i] = ended{t: fs[j].Applied(ts[j], now), decision: fs[j].Attempt.Decision}
		byOwner[ts[j].LeaseOwner] = append(byOwner[ts[j].LeaseOwner], gate.End{Task: &ts[j], Finish: &fs[j]})
		wake = wake || fs[j].State.Waiting() || ts[j].RunID != 0 || len(fs[j].Publish) > 0
	}
	if wake {
		s.wake.notify() // a retry, a dependent or a delivery may be due
	}
	for owner, ends := range byOwner {
		s.gate.Ended(ctx, owner, ends)
	}
}

// lost answers a result the store refused: a lease lost between the read
// and the write may have been lost to this very result, sent twice (in
// one report, or in two calls at once).
func (s *Server) lost(ctx context.Context, t task.Task, f store.Finish, err error) ended {
	if !errors.Is(err, task.ErrLeaseLost) {
		return ended{t: t, err: err}
	}
	cur, rec, err := s.held(ctx, t.LeaseOwner, t.ID, f.Token, f.Outcome())
	if err == nil && rec == nil {
		err = leaseLost(cur, f.Token, nil, -1)
		s.cfg.Metrics.Stale(&t)
	}
	if err != nil {
		return ended{t: cur, err: err}
	}
	return ended{t: cur, decision: rec.Decision}
}
