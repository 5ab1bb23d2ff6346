package engine

import (
	"fmt"
	"time"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// verdict is what a result's policy decided when recording it failed.
type verdict int

const (
	keepTrying verdict = iota // try to record the result again
	giveUp                    // give the attempt up: its lease lapses
	failTask                  // record the task's failure instead
)

// commitFailed asks the OnCommitError hook of p's task's policy, if it has
// one, what to do now that recording p's result failed with err, the
// store's answer to that result, p.fails times in a row: keep trying (the
// default, and what a policy without the hook gets), give the attempt up,
// or fail the task, which makes p.f the failure to record instead.
//
// The hook gets a retry.Attempt of Kind CommitError, with Err the store's
// error (task.ErrRefused when the store refused this result alone and
// recorded the others of its batch; the store's own error when it failed
// the batch as a whole) and Streak the failures in a row, and the default
// decision: retry after delay. It answers with a Decision: Retry to keep
// trying; otherwise Reason ReasonCanceled gives the attempt up (its result
// is not recorded; its lease lapses, and the rescue's interrupted rule
// decides, as for a worker that died), and any other reason fails the
// task (FAILED, with the error that kept the result out, recorded
// instead of the result).
func (e *Engine) commitFailed(p *pending, err error, delay time.Duration, now time.Time) verdict {
	pol := e.policyFor(p.a.t)
	if pol.OnCommitError == nil {
		return keepTrying
	}
	a := retry.Attempt{Number: p.a.t.Attempt, Kind: retry.CommitError, Err: err, PrevDelay: p.a.t.PrevDelay, Streak: p.fails}
	if !p.a.t.FirstStartedAt.IsZero() {
		a.Elapsed = now.Sub(p.a.t.FirstStartedAt)
	}
	d := pol.OnCommitError(a, retry.Decision{Retry: true, At: now.Add(delay), Delay: delay, Reason: retry.ReasonRetry})
	switch {
	case d.Retry:
		return keepTrying
	case d.Reason == retry.ReasonCanceled:
		e.cfg.Logger.Warn("the policy gave up recording an attempt's result; its lease will lapse", "task", p.a.t.ID, "err", err, "failures", p.fails)
		return giveUp
	}
	p.f = failedToRecord(p.f, err, d.Reason, now)
	e.withCatch(p.a.t, &p.f)
	e.cfg.Logger.Warn("the policy fails a task whose result could not be recorded", "task", p.a.t.ID, "err", err, "failures", p.fails)
	return failTask
}

// failedToRecord is f turned into the task's failure: the result it
// carried could not be recorded.
func failedToRecord(f store.Finish, err error, why retry.Reason, now time.Time) store.Finish {
	msg := fmt.Sprintf("the attempt's result could not be recorded: %v", err)
	out := store.Finish{
		TaskID: f.TaskID, Token: f.Token, State: task.Failed,
		Error: msg, Fingerprint: retry.Fingerprint(err), Streak: 0, PrevDelay: f.PrevDelay,
		Attempt: f.Attempt,
	}
	out.Attempt.Outcome, out.Attempt.Class, out.Attempt.Error = task.OutcomeError, retry.ClassPermanent.String(), msg
	out.Attempt.Fingerprint, out.Attempt.Decision, out.Attempt.Delay = out.Fingerprint, why.String(), 0
	if out.Attempt.EndedAt.IsZero() {
		out.Attempt.EndedAt = now
	}
	return out
}
