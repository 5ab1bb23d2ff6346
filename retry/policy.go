package retry

import (
	"fmt"
	"time"
)

// Policy says how a failed unit of work is retried. The zero Policy retries
// forever with the default backoff; use a preset or Parse for anything else.
// A Policy is a value: copy it freely, and share it between goroutines as
// long as its Rand and hooks are safe for concurrent use.
type Policy struct {
	// MaxAttempts bounds the attempts, the first included; 0 is unlimited,
	// 1 never retries. Attempts that end in a resource deferral are not
	// counted (see Classes).
	MaxAttempts int
	// Backoff computes the delay before each retry; nil is
	// Exponential{Min: 1s, Max: 5m} with full jitter.
	Backoff Backoff
	// Resource computes the delay after a resource failure; nil is
	// 60s × 2^(n-1), capped at 5m, where n counts the resource failures
	// (see Attempt.Deferrals).
	Resource Backoff
	// MaxElapsed is a budget for the whole unit of work, measured from the
	// start of its first attempt: a retry whose delay would end past it is
	// refused. 0 is no budget.
	MaxElapsed time.Duration
	// ExplicitOnly retries only errors marked retryable (Transient, After,
	// Resource, or wrapping ErrTransient, ErrAfter or ErrResource); any
	// other error stops at once. Nothing is inferred under it (see
	// Policy.Classify): a refused connection is retried only if marked.
	ExplicitOnly bool
	// Classes gives failures of a class their own attempts and backoff,
	// e.g. transient failures 20 retries from 2s to 5m while the rest keep
	// MaxAttempts and Backoff. Only ClassTransient, Unclassified,
	// ClassAfter and ClassResource are looked up, and only for task errors
	// (not interrupted attempts nor commit errors). Treat the map as
	// read-only once the policy is in use: copies of the policy share it.
	//
	// Resource failures are deferrals, counted apart from the attempts
	// (Attempt.Deferrals): MaxAttempts never stops them, and a policy
	// without a ClassResource entry defers at most DefaultMaxDeferrals
	// times.
	Classes map[Class]ClassPolicy
	// PoisonAfter is how many consecutive unclassified failures with the same
	// fingerprint make the work poison; 0 means 2, a negative value turns
	// poison detection off.
	PoisonAfter int
	// Rand is the jitter's source of randomness; nil is DefaultRand.
	Rand Rand

	// The three hooks, after zc.async. Each gets the failed attempt and the
	// decision the policy took, and returns the decision to apply; nil keeps
	// the policy's decision.
	OnInterrupted Hook // the attempt never finished: its process died or was stopped
	OnTaskError   Hook // the work failed with an error
	OnCommitError Hook // the work's result could not be recorded
}

// ClassPolicy is the schedule of one class of failures (Policy.Classes).
//
// MaxAttempts applies to the attempt's number, which counts every attempt
// of the work whatever its class, deferrals aside: under
// "5 1s 1m transient=20,2s,5m" a transient failure of attempt 9 is
// retried, and an unclassified failure of attempt 9 stops (exhausted).
// The backoff's n is that number too.
//
// ClassResource is the exception: its failures are counted on their own.
// Its MaxAttempts bounds the resource failures (MaxAttempts-1 deferrals;
// the next resource failure ends the work as exhausted), and its
// backoff's n is the resource failure's number.
type ClassPolicy struct {
	// MaxAttempts bounds the attempts, as Policy.MaxAttempts does, when the
	// failure is of this class: 0 is unlimited, 1 never retries.
	MaxAttempts int
	// Backoff computes the delay before a retry after a failure of this
	// class; nil keeps the policy's (Policy.Resource for ClassResource,
	// Policy.Backoff for the others). A ClassAfter failure still waits at
	// least the delay it asks for.
	Backoff Backoff
}

// Hook can change the decision taken after one kind of failure.
type Hook func(a Attempt, d Decision) Decision

// Presets.
var (
	// CommonFourTimes retries four times (five attempts), with exponential
	// backoff from 1s up to 1m and full jitter. It is the default policy.
	CommonFourTimes = Policy{MaxAttempts: 5, Backoff: Exponential{Min: time.Second, Max: time.Minute}}
	// CommonForever retries without limit, with exponential backoff from 1s
	// up to 10m and full jitter.
	CommonForever = Policy{Backoff: Exponential{Min: time.Second, Max: 10 * time.Minute}}
	// Never does not retry.
	Never = Policy{MaxAttempts: 1}
)

// DefaultMaxDeferrals is how many times a policy without a schedule for
// ClassResource defers the work after a resource failure: with the default
// resource backoff, about eight hours of a full cluster. Deferrals use no
// attempt; the resource failure after the last deferral ends the work
// (exhausted).
const DefaultMaxDeferrals = 100

var (
	defaultBackoff  Backoff = Exponential{Min: time.Second, Max: 5 * time.Minute}
	defaultResource Backoff = Exponential{Min: time.Minute, Max: 5 * time.Minute, Jitter: JitterNone}
)

// Kind is what kind of failure an attempt ended in.
type Kind uint8

const (
	// TaskError: the work itself failed (an error, a panic, a non-zero exit).
	TaskError Kind = iota
	// Interrupted: the attempt never finished; its worker died or stopped.
	Interrupted
	// CommitError: the work succeeded or failed, but its result could not be
	// recorded.
	CommitError
)

var kindNames = [...]string{"task error", "interrupted", "commit error"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Attempt describes a failed attempt, as Decide needs it.
type Attempt struct {
	// Number is the attempt that failed, from 1, not counting the
	// attempts that ended in a deferral (Decision.Deferred).
	Number    int
	Kind      Kind          // TaskError unless said otherwise
	Err       error         // the failure; may be nil for Interrupted
	Elapsed   time.Duration // since the first attempt started
	PrevDelay time.Duration // the delay chosen before this attempt (0 for the first)
	// Streak is how many consecutive failures, this one included, had this
	// failure's fingerprint; 0 when the caller does not track fingerprints.
	Streak int
	// Deferrals is how many earlier attempts ended in a resource deferral
	// (Decision.Deferred); this failure, if it is one, is not counted.
	Deferrals int
}

// Reason says why a decision retries or stops.
type Reason uint8

const (
	ReasonRetry     Reason = iota // retry at Decision.At
	ReasonExhausted               // the attempts are used up
	ReasonPermanent               // the error is not retryable
	ReasonBudget                  // a budget (time, calls or tokens) refuses the retry
	ReasonPoison                  // the same failure repeated: retrying is pointless
	ReasonCanceled                // the work was canceled
)

var reasonNames = [...]string{"retry", "exhausted", "permanent", "budget", "poison", "canceled"}

func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// Decision is the outcome of Decide.
type Decision struct {
	Retry  bool          // retry at At; otherwise stop for Reason
	At     time.Time     // when to retry
	Delay  time.Duration // At minus the decision's now
	Reason Reason
	Class  Class // the failure's class, as Classify saw it
	// Deferred says the retry is a resource deferral: the attempt it
	// follows is not counted in the next Attempt.Number, but in
	// Attempt.Deferrals.
	Deferred bool
}

// Stop returns a decision to stop for reason r.
func (d Decision) Stop(r Reason) Decision {
	d.Retry, d.At, d.Delay, d.Reason, d.Deferred = false, time.Time{}, 0, r, false
	return d
}

// Decide takes the decision after a failed attempt at time now: retry at a
// time, or stop with a reason. It is pure apart from the jitter's randomness.
//
// A task error of ClassResource is a deferral: its count is the resource
// failure's (a.Deferrals+1), not the attempt's, and a retry says Deferred.
func (p *Policy) Decide(a Attempt, now time.Time) Decision {
	class, after := p.Classify(a.Err)
	d := Decision{Class: class}
	cp := p.forClass(a.Kind, class)
	n, deferral := a.Number, a.Kind == TaskError && class == ClassResource
	if deferral {
		n = a.Deferrals + 1
	}
	if r, stop := p.stopReason(a, class, n, cp.MaxAttempts); stop {
		d = d.Stop(r)
	} else {
		d = p.schedule(a, n, d, cp.Backoff, after, now)
		d.Deferred = deferral
	}
	if h := p.hook(a.Kind); h != nil {
		d = h(a, d)
	}
	return d
}

// Classify is how the policy sees err: [Classify], or [Marked] when the
// policy is ExplicitOnly, so that only what the caller marked is retried.
func (p *Policy) Classify(err error) (Class, time.Duration) {
	if p.ExplicitOnly {
		return Marked(err)
	}
	return Classify(err)
}

// forClass is the schedule for a failure of kind k and class c: the class's
// own from Classes, its nil Backoff filled in, or the policy's.
func (p *Policy) forClass(k Kind, c Class) ClassPolicy {
	def := orDefault(p.Backoff, defaultBackoff)
	if c == ClassResource {
		def = orDefault(p.Resource, defaultResource)
	}
	cp, ok := p.Classes[c]
	if !ok && k == TaskError && c == ClassResource {
		return ClassPolicy{MaxAttempts: DefaultMaxDeferrals + 1, Backoff: def}
	}
	if !ok || k != TaskError || c == ClassPermanent || c == ClassCanceled {
		return ClassPolicy{MaxAttempts: p.MaxAttempts, Backoff: def}
	}
	cp.Backoff = orDefault(cp.Backoff, def)
	return cp
}

// stopReason says whether the failure stops the work, n being its count
// (the attempt's number, or for a deferral the resource failure's).
func (p *Policy) stopReason(a Attempt, class Class, n, maxAttempts int) (Reason, bool) {
	switch {
	case class == ClassCanceled:
		return ReasonCanceled, true
	case class == ClassPermanent:
		return ReasonPermanent, true
	case a.Kind == TaskError && p.ExplicitOnly && !class.Retryable():
		return ReasonPermanent, true
	case a.Kind == TaskError && class == Unclassified && p.poisoned(a.Streak):
		return ReasonPoison, true
	case maxAttempts > 0 && n >= maxAttempts:
		return ReasonExhausted, true
	}
	return ReasonRetry, false
}

func (p *Policy) poisoned(streak int) bool {
	n := p.PoisonAfter
	if n == 0 {
		n = 2
	}
	return n > 0 && streak >= n
}

func (p *Policy) schedule(a Attempt, n int, d Decision, b Backoff, after time.Duration, now time.Time) Decision {
	delay := max(b.Delay(max(n, 1), a.PrevDelay, p.rand()), after, 0)
	if p.MaxElapsed > 0 && a.Elapsed+delay > p.MaxElapsed {
		return d.Stop(ReasonBudget)
	}
	d.Retry, d.Reason, d.Delay, d.At = true, ReasonRetry, delay, now.Add(delay)
	return d
}

func (p *Policy) hook(k Kind) Hook {
	switch k {
	case Interrupted:
		return p.OnInterrupted
	case CommitError:
		return p.OnCommitError
	default:
		return p.OnTaskError
	}
}

func (p *Policy) rand() Rand {
	if p.Rand != nil {
		return p.Rand
	}
	return DefaultRand
}

func orDefault(b, def Backoff) Backoff {
	if b != nil {
		return b
	}
	return def
}
