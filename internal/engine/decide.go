package engine

import (
	"errors"
	"fmt"
	"sync"
	"time"

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
	var snooze *SnoozeError
	switch {
	case o.err == nil && !o.stuck:
		f.State, f.Attempt.Outcome = task.Success, task.OutcomeSuccess
		f.Publish = o.rec.published()
	case errors.Is(o.cause, errReleased) || errors.Is(o.cause, task.ErrLeaseLost):
		// Released on a graceful stop, or taken from us: the attempt does
		// not count. A lost lease's write is rejected by the store anyway.
		f.State, f.NextAt, f.Refund = task.Ready, now, true
		f.Attempt.Outcome, f.Attempt.Error = task.OutcomeReleased, causeText(o.cause)
	case o.cause == nil && errors.As(o.err, &snooze):
		f.State, f.NextAt, f.Refund = task.Sensing, now.Add(snooze.Delay), true
		f.Attempt.Outcome, f.Attempt.Delay = task.OutcomeSnoozed, snooze.Delay
	default:
		e.failed(&f, t, o, now)
	}
	return f
}

func causeText(cause error) string {
	if cause == nil {
		return ""
	}
	return cause.Error()
}

// failed decides what a failed attempt leads to: a retry at a time,
// FAILED, or DEAD_LETTER for poison.
func (e *Engine) failed(f *store.Finish, t task.Task, o outcome, now time.Time) {
	err := o.err
	f.Attempt.Outcome = task.OutcomeError
	if errors.Is(o.cause, errTimedOut) || o.stuck {
		// A timeout is retried but never poison: the bug may be the timeout.
		err = retry.Transient(&TimeoutError{After: o.timeout, Stuck: o.stuck, Err: o.err})
		f.Attempt.Outcome = task.OutcomeTimeout
	}
	class, _ := retry.Classify(err)
	fp := fingerprint(err)
	streak := 0
	if class == retry.Unclassified {
		streak = 1
		if fp == t.Fingerprint && t.Streak > 0 {
			streak = t.Streak + 1
		}
	}
	p := e.policyFor(t)
	d := p.Decide(retry.Attempt{
		Number: t.Attempt, Kind: retry.TaskError, Err: err,
		Elapsed: elapsed(t, now), PrevDelay: t.PrevDelay, Streak: streak,
	}, now)
	msg := err.Error()
	if f.Attempt.Outcome == task.OutcomeTimeout {
		if hint := e.timeoutHint(t, o.timeout); hint != "" {
			msg += " (" + hint + ")"
		}
	}
	f.State, f.NextAt = stateFor(d), d.At
	f.Error, f.Fingerprint, f.Streak, f.PrevDelay = msg, fp, streak, d.Delay
	a := &f.Attempt
	a.Class, a.Error, a.Fingerprint, a.Delay, a.Decision = class.String(), msg, fp, d.Delay, d.Reason.String()
}

// interrupted decides what happens to a task whose worker died mid-attempt.
// The attempt counts (a task that kills its worker every time must end),
// but unless the policy's OnInterrupted hook says otherwise, the retry is
// due at once and in the task's place in its queue: due as of when it was
// created, so that it runs before the backlog enqueued after it rather
// than behind it. The worker's death was not the task's failure.
func (e *Engine) interrupted(t task.Task, now time.Time) store.Finish {
	p := e.policyFor(t)
	d := p.Decide(retry.Attempt{Number: t.Attempt, Kind: retry.Interrupted, Elapsed: elapsed(t, now), PrevDelay: t.PrevDelay}, now)
	if d.Retry && p.OnInterrupted == nil {
		d.At, d.Delay = now, 0
		if !t.CreatedAt.IsZero() && t.CreatedAt.Before(now) {
			d.At = t.CreatedAt
		}
	}
	msg := fmt.Sprintf("interrupted: its worker stopped before attempt %d ended", t.Attempt)
	return store.Finish{
		TaskID: t.ID, Token: t.LeaseToken, State: stateFor(d), NextAt: d.At,
		Error: msg, Fingerprint: t.Fingerprint, Streak: t.Streak, PrevDelay: d.Delay,
		Attempt: task.Attempt{
			TaskID: t.ID, Number: t.Attempt, Worker: t.LeaseOwner, LeaseToken: t.LeaseToken,
			Outcome: task.OutcomeInterrupted, Error: msg, Delay: d.Delay, Decision: d.Reason.String(), EndedAt: now,
		},
	}
}

func stateFor(d retry.Decision) task.State {
	switch {
	case d.Retry:
		return task.Retrying
	case d.Reason == retry.ReasonPoison:
		return task.DeadLetter
	default:
		return task.Failed
	}
}

func elapsed(t task.Task, now time.Time) time.Duration {
	if t.FirstStartedAt.IsZero() {
		return 0
	}
	return now.Sub(t.FirstStartedAt)
}

// fingerprint is a process failure's exit fingerprint, or the error's.
func fingerprint(err error) string {
	if x, ok := exitDetails(err); ok {
		return retry.FingerprintExit(x.Code, x.Signal, x.Stderr)
	}
	return retry.Fingerprint(err)
}

// policies caches the policies parsed from tasks' policy strings.
var policies sync.Map // string -> retry.Policy

// policyFor is the task's own policy, else its handler's, else the default.
func (e *Engine) policyFor(t task.Task) retry.Policy {
	p := retry.CommonFourTimes
	if h, ok := e.handlers[t.Kind]; ok && h.Policy != nil {
		p = *h.Policy
	}
	if t.Policy != "" {
		if v, ok := policies.Load(t.Policy); ok {
			p = v.(retry.Policy)
		} else if parsed, err := retry.Parse(t.Policy); err == nil {
			policies.Store(t.Policy, parsed)
			p = parsed
		} else {
			e.cfg.Logger.Error("task has a bad retry policy; using the default", "task", t.ID, "err", err)
		}
	}
	if t.PoisonAfter != 0 {
		p.PoisonAfter = t.PoisonAfter
	}
	return p
}
