// Package decide turns an attempt's end into the store change that ends
// it: a failure's retry, FAILED or DEAD_LETTER (Failure), a dead worker's
// interrupted attempt (Interrupted), under the task's policy (Policy).
// Every claimer decides with it: the engine for Go handlers, the API
// server for remote workers, and the gate when it rescues expired leases.
package decide

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// The decisions are pure apart from the jitter's randomness.

// errNoError stands for the error of a failure reported without one.
var errNoError = errors.New("the attempt failed without an error")

// Failure decides what a failed attempt of t leads to at now under
// policy p (see Policy): RETRYING at a time, FAILED, or DEAD_LETTER
// when the same unclassified failure (by fingerprint) repeats. err's class
// is as p sees it (retry.Policy.Classify): retry's marks (retry.Transient,
// retry.Permanent, retry.After, retry.Resource, or a wrapped sentinel), an
// unmarked outage (a refused connection, a timeout…) as transient unless p
// is explicit-only, anything else unclassified. p's schedule for that
// class (retry.Policy.Classes) applies; an *ExitError in err is
// fingerprinted by exit status and its last line of stderr.
//
// A resource failure p retries is a deferral: it uses no attempt (f.Refund)
// and counts in the task's Deferrals (f.Deferred) instead.
//
// It writes the decision on f: the task's next State and NextAt, its
// Error, Fingerprint, Streak and PrevDelay, and the attempt's Class,
// Error, Fingerprint, Delay and Decision. f.Attempt.Outcome is left as the
// caller set it (OutcomeTimeout for an attempt cut off), or becomes
// OutcomeError.
func Failure(f *store.Finish, t task.Task, err error, p retry.Policy, now time.Time) {
	if err == nil {
		err = errNoError
	}
	class, after := p.Classify(err)
	fp := fingerprint(err)
	streak := 0
	if class == retry.Unclassified {
		streak = 1
		if fp == t.Fingerprint && t.Streak > 0 {
			streak = t.Streak + 1
		}
	}
	d := p.Decide(retry.Attempt{
		Number: t.Attempt, Kind: retry.TaskError, Err: err,
		Elapsed: elapsed(t, now), PrevDelay: t.PrevDelay, Streak: streak, Deferrals: t.Deferrals,
	}, now)
	if f.Attempt.Outcome == "" || f.Attempt.Outcome == task.OutcomeRunning {
		f.Attempt.Outcome = task.OutcomeError
	}
	msg := err.Error()
	f.State, f.NextAt = stateFor(d), d.At
	if d.Retry && d.Deferred {
		f.Refund, f.Deferred = true, true // resource pressure uses no attempt
	}
	f.Error, f.Fingerprint, f.Streak, f.PrevDelay = msg, fp, streak, d.Delay
	f.After = 0
	if class == retry.ClassAfter {
		f.After = after // the downstream's own word: its group is held so long
	}
	a := &f.Attempt
	a.Class, a.Error, a.Fingerprint, a.Delay, a.Decision = class.String(), msg, fp, d.Delay, d.Reason.String()
}

// Interrupted decides what happens to t, whose worker died
// mid-attempt, at now under policy p. The attempt counts (a task that
// kills its worker every time must end), but unless p's OnInterrupted hook
// says otherwise, the retry is due at once and in the task's place in its
// queue: due as of when it was created, so that it runs before the
// backlog enqueued after it rather than behind it. The worker's death was
// not the task's failure.
func Interrupted(t task.Task, p retry.Policy, now time.Time) store.Finish {
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

// policies caches the policies parsed from tasks' policy strings.
var policies sync.Map // string -> retry.Policy

// Policy is the policy t is retried by: its own (t.Policy, in
// retry.Parse's grammar, per-class schedules and explicit_only included)
// if it has one, else def; with t.PoisonAfter, if set. A policy string
// that does not parse gives def, and the error.
func Policy(t task.Task, def retry.Policy) (retry.Policy, error) {
	p := def
	var err error
	if t.Policy != "" {
		if v, ok := policies.Load(t.Policy); ok {
			p = v.(retry.Policy)
		} else if parsed, perr := retry.Parse(t.Policy); perr == nil {
			policies.Store(t.Policy, parsed)
			p = parsed
		} else {
			err = perr
		}
	}
	if t.PoisonAfter != 0 {
		p.PoisonAfter = t.PoisonAfter
	}
	return p, err
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
