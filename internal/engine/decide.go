package engine

import (
	"errors"
	"time"

	"github.com/grit-run/grit/internal/autotimeout"
	"github.com/grit-run/grit/internal/decide"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// finishFor turns an attempt's outcome into the store change that ends it.
func (e *Engine) finishFor(t task.Task, o outcome) store.Finish {
	now := e.storeNow()
	f := store.Finish{
		TaskID: t.ID, Token: t.LeaseToken,
		Error: t.LastError, Fingerprint: t.Fingerprint, Streak: t.Streak, PrevDelay: t.PrevDelay,
		Attempt: task.Attempt{
			TaskID: t.ID, Number: t.Attempt, Worker: e.cfg.WorkerID, LeaseToken: t.LeaseToken,
			StartedAt: o.started, EndedAt: o.ended,
		},
	}
	if o.rec != nil {
		f.Attempt.Output, f.Attempt.ExitCode, f.Attempt.Signal = o.rec.output, o.rec.exitCode, o.rec.signal
	}
	switch {
	case o.err == nil && !o.stuck:
		f.State, f.Attempt.Outcome = task.Success, task.OutcomeSuccess
		f.Publish = o.rec.published()
	case errors.Is(o.cause, errReleased) || errors.Is(o.cause, task.ErrLeaseLost):
		// Released on a graceful stop, or taken from us: the attempt does
		// not count. A lost lease's write is rejected by the store anyway.
		f.State, f.NextAt, f.Refund = task.Ready, now, true
		f.Attempt.Outcome, f.Attempt.Error = task.OutcomeReleased, causeText(o.cause)
	case o.cause == nil && waitOf(o.err) != nil:
		waitOf(o.err).decide(&f, now)
	case o.cause == nil && snoozed(o.err) != nil:
		if err := e.snooze(&f, t, snoozed(o.err), now); err != nil {
			o.err = err
			e.failed(&f, t, o, now)
		}
	default:
		e.failed(&f, t, o, now)
	}
	autotimeout.Keep(&f, o.timeout, o.timeoutSource)
	return f
}

// snoozed is err's SnoozeError, if it has one. It is a function of its
// own so that the variable errors.As needs is allocated only when a
// failure is looked at, not for every success.
func snoozed(err error) *SnoozeError {
	var s *SnoozeError
	if errors.As(err, &s) {
		return s
	}
	return nil
}

// snooze decides a snooze (decide.Snooze) under the task's bound: the
// SnoozeError's own, else its handler's. It returns the failure to decide
// in its place when the bound is reached.
func (e *Engine) snooze(f *store.Finish, t task.Task, s *SnoozeError, now time.Time) error {
	limit := s.Max
	if h, ok := e.handlers[t.Kind]; ok && limit == 0 {
		limit = h.MaxSnoozes
	}
	return decide.Snooze(f, t, s.Delay, limit, now)
}

func causeText(cause error) string {
	if cause == nil {
		return ""
	}
	return cause.Error()
}

// failed decides what a failed attempt leads to: a retry at a time,
// FAILED, or DEAD_LETTER for poison (decide.Failure, shared with remote
// workers). A timeout is retried but never poison: the bug may be the
// timeout, which the error then says when it keeps happening.
func (e *Engine) failed(f *store.Finish, t task.Task, o outcome, now time.Time) {
	err := o.err
	f.Attempt.Outcome = task.OutcomeError
	if errors.Is(o.cause, errTimedOut) || o.stuck {
		err = retry.Transient(&TimeoutError{After: o.timeout, Source: autoSource(o.timeoutSource), Stuck: o.stuck, Err: o.err})
		f.Attempt.Outcome = task.OutcomeTimeout
	}
	decide.Failure(f, t, err, e.policyFor(t), now)
	if f.Attempt.Outcome == task.OutcomeTimeout {
		if hint := e.timeoutHint(t, o.timeout); hint != "" {
			f.Error += " (" + hint + ")"
			f.Attempt.Error = f.Error
		}
	}
}

// interrupted decides what happens to a task whose worker died mid-attempt
// (decide.Interrupted under the task's policy).
func (e *Engine) interrupted(t task.Task, now time.Time) store.Finish {
	return decide.Interrupted(t, e.policyFor(t), now)
}

// policyFor is the task's own policy, else its handler's, else the default.
func (e *Engine) policyFor(t task.Task) retry.Policy {
	def := retry.CommonFourTimes
	if h, ok := e.handlers[t.Kind]; ok && h.Policy != nil {
		def = *h.Policy
	}
	p, err := decide.Policy(t, def)
	if err != nil {
		e.cfg.Logger.Error("task has a bad retry policy; using the default", "task", t.ID, "err", err)
	}
	return p
}
