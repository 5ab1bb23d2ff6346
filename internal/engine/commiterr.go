package engine

import (
	"fmt"
	"time"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// onCommitError asks the OnCommitError hook of each of batch's tasks'
// policies, if it has one, what to do now that recording the batch has
// failed n times in a row with err: keep trying (the default, and what a
// policy without the hook gets), give the attempt up, or fail the task.
// It returns the batch and the store's items to try again, and the
// attempts given up, which the caller forgets.
//
// The hook gets a retry.Attempt of Kind CommitError, with Err the store's
// error and Streak the failures in a row, and the default decision: retry
// after delay. It answers with a Decision: Retry to keep trying;
// otherwise Reason ReasonCanceled gives the attempt up (its result is not
// recorded; its lease lapses, and the rescue's interrupted rule decides,
// as for a worker that died), and any other reason fails the task
// (FAILED, with the error that kept the result out, recorded instead of
// the result).
func (e *Engine) onCommitError(batch []pending, fs []store.Finish, err error, n int, delay time.Duration) (kept []pending, keptFs []store.Finish, gaveUp []pending) {
	now := e.storeNow()
	changed := false
	for i, p := range batch {
		pol := e.policyFor(p.a.t)
		if pol.OnCommitError == nil {
			kept, keptFs = append(kept, p), append(keptFs, fs[i])
			continue
		}
		a := retry.Attempt{Number: p.a.t.Attempt, Kind: retry.CommitError, Err: err, PrevDelay: p.a.t.PrevDelay, Streak: n}
		if !p.a.t.FirstStartedAt.IsZero() {
			a.Elapsed = now.Sub(p.a.t.FirstStartedAt)
		}
		d := pol.OnCommitError(a, retry.Decision{Retry: true, At: now.Add(delay), Delay: delay, Reason: retry.ReasonRetry})
		switch {
		case d.Retry:
			kept, keptFs = append(kept, p), append(keptFs, fs[i])
		case d.Reason == retry.ReasonCanceled:
			e.cfg.Logger.Warn("the policy gave up recording an attempt's result; its lease will lapse", "task", p.a.t.ID, "err", err, "failures", n)
			gaveUp = append(gaveUp, p)
			changed = true
		default:
			f := failedToRecord(p.f, err, d.Reason, now)
			e.withCatch(p.a.t, &f)
			p.f = f
			kept, keptFs = append(kept, p), append(keptFs, f)
			changed = true
			e.cfg.Logger.Warn("the policy fails a task whose result could not be recorded", "task", p.a.t.ID, "err", err, "failures", n)
		}
	}
	if !changed {
		return batch, fs, nil
	}
	return kept, keptFs, gaveUp
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
