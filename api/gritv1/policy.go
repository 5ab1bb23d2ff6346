package gritv1

import (
	"fmt"
	"math"
	"time"

	"github.com/grit-run/grit/retry"
	"google.golang.org/protobuf/types/known/durationpb"
)

// A RetryPolicy is a policy string's fields (retry.Parse's grammar). The
// functions below are the one mapping each way: a RetryPolicy becomes a
// retry.Policy, which the server keeps as its string (retry.Policy.String),
// and a parsed policy becomes a RetryPolicy for an answer. Parse stays the
// judge of what a policy may be: RetryPolicy.Policy checks what the fields
// alone can get wrong, naming the field, and hands the rest to Parse.

// PolicyError is a RetryPolicy's field at fault and what is wrong with it.
type PolicyError struct {
	// Field is the field's path within the RetryPolicy, e.g.
	// "backoff.initial" or "classes[1].max_attempts".
	Field string
	Msg   string
}

func (e *PolicyError) Error() string { return e.Field + ": " + e.Msg }

func policyErr(field, format string, args ...any) error {
	return &PolicyError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// classes are the classes a RetryPolicy's classes may name, with grit's.
var classes = map[ErrorClass]retry.Class{
	ErrorClass_ERROR_CLASS_TRANSIENT:    retry.ClassTransient,
	ErrorClass_ERROR_CLASS_UNCLASSIFIED: retry.Unclassified,
	ErrorClass_ERROR_CLASS_AFTER:        retry.ClassAfter,
	ErrorClass_ERROR_CLASS_RESOURCE:     retry.ClassResource,
}

// Policy is r as grit's retry.Policy, written in Parse's grammar and
// parsed back, so that it is exactly what the same policy given as a
// string would be. A field that is wrong gives a *PolicyError naming it;
// a policy that Parse refuses, its error, with the string it was written
// as.
func (r *RetryPolicy) Policy() (retry.Policy, error) {
	attempts, err := maxAttempts("", r.GetMaxAttempts(), r.GetUnlimited())
	if err != nil {
		return retry.Policy{}, err
	}
	p := retry.Policy{MaxAttempts: attempts, ExplicitOnly: r.GetExplicitOnly()}
	if attempts != 1 || r.GetBackoff() != nil {
		if p.Backoff, err = backoffOf("backoff", r.GetBackoff(), true); err != nil {
			return retry.Policy{}, err
		}
	}
	if d := r.GetMaxElapsed(); d != nil {
		if p.MaxElapsed, err = positive("max_elapsed", d); err != nil {
			return retry.Policy{}, err
		}
	}
	for i, c := range r.GetClasses() {
		field := fmt.Sprintf("classes[%d]", i)
		class, ok := classes[c.GetErrorClass()]
		if !ok {
			return retry.Policy{}, policyErr(field+".error_class", "%s: want ERROR_CLASS_TRANSIENT, ERROR_CLASS_UNCLASSIFIED, ERROR_CLASS_AFTER or ERROR_CLASS_RESOURCE", c.GetErrorClass())
		}
		if _, dup := p.Classes[class]; dup {
			return retry.Policy{}, policyErr(field+".error_class", "%s is given twice: give each class one schedule", c.GetErrorClass())
		}
		cp := retry.ClassPolicy{}
		if cp.MaxAttempts, err = maxAttempts(field+".", c.GetMaxAttempts(), c.GetUnlimited()); err != nil {
			return retry.Policy{}, err
		}
		if cp.MaxAttempts != 1 || c.GetBackoff() != nil {
			if cp.Backoff, err = backoffOf(field+".backoff", c.GetBackoff(), false); err != nil {
				return retry.Policy{}, err
			}
		}
		if p.Classes == nil {
			p.Classes = map[retry.Class]retry.ClassPolicy{}
		}
		p.Classes[class] = cp
	}
	return retry.Parse(p.String())
}

func maxAttempts(prefix string, n int64, unlimited bool) (int, error) {
	switch {
	case unlimited && n != 0:
		return 0, policyErr(prefix+"unlimited", "set with max_attempts %d: set one of them", n)
	case unlimited:
		return 0, nil
	case n == 0:
		return 0, policyErr(prefix+"max_attempts", "missing: 1 never retries, N+1 retries N times; set unlimited to retry without a bound")
	case n < 0 || n > math.MaxInt32:
		return 0, policyErr(prefix+"max_attempts", "%d: want 1 to %d", n, math.MaxInt32)
	}
	return int(n), nil
}

func positive(field string, d *durationpb.Duration) (time.Duration, error) {
	if err := d.CheckValid(); err != nil {
		return 0, policyErr(field, "%v", err)
	}
	v := d.AsDuration()
	if v <= 0 {
		return 0, policyErr(field, "%s: want a positive duration", v)
	}
	return v, nil
}

// backoffOf is b as a retry.Backoff; policy is false for a class's, which
// takes no multiplier.
func backoffOf(field string, b *Backoff, policy bool) (retry.Backoff, error) {
	if b == nil {
		return nil, policyErr(field, "missing: give its initial delay (and max, for an exponential backoff)")
	}
	if b.GetInitial() == nil {
		return nil, policyErr(field+".initial", "missing: the first delay, e.g. 1s")
	}
	initial, err := positive(field+".initial", b.GetInitial())
	if err != nil {
		return nil, err
	}
	m := b.GetMultiplier()
	switch {
	case math.IsNaN(m) || m < 0 || (m > 0 && m < 1) || math.IsInf(m, 0):
		return nil, policyErr(field+".multiplier", "%v: want 1 or more (0 is 2)", m)
	case m != 0 && !policy:
		return nil, policyErr(field+".multiplier", "%v: a class's backoff doubles; leave it 0", m)
	}
	if b.GetMax() == nil {
		if m != 0 || b.GetJitter() != Jitter_JITTER_UNSPECIFIED {
			return nil, policyErr(field+".max", "missing: a multiplier or a jitter is for an exponential backoff, which needs a max (without one the delay is initial every time)")
		}
		return retry.Constant{Interval: initial}, nil
	}
	hi, err := positive(field+".max", b.GetMax())
	if err != nil {
		return nil, err
	}
	if hi < initial {
		return nil, policyErr(field+".max", "%s: below initial (%s)", retry.FormatDuration(hi), retry.FormatDuration(initial))
	}
	switch b.GetJitter() {
	case Jitter_JITTER_UNSPECIFIED, Jitter_JITTER_FULL:
		return retry.Exponential{Min: initial, Max: hi, Multiplier: m, Jitter: retry.JitterFull}, nil
	case Jitter_JITTER_EQUAL:
		return retry.Exponential{Min: initial, Max: hi, Multiplier: m, Jitter: retry.JitterEqual}, nil
	case Jitter_JITTER_NONE:
		return retry.Exponential{Min: initial, Max: hi, Multiplier: m, Jitter: retry.JitterNone}, nil
	case Jitter_JITTER_DECORRELATED:
		if m != 0 {
			return nil, policyErr(field+".multiplier", "%v: a decorrelated backoff takes none; leave it 0", m)
		}
		return retry.Decorrelated{Min: initial, Max: hi}, nil
	}
	return nil, policyErr(field+".jitter", "%s: want JITTER_FULL, JITTER_EQUAL, JITTER_NONE or JITTER_DECORRELATED", b.GetJitter())
}

// RetryPolicyOf is p as fields, for a policy that retry.Parse gave; nil
// for a backoff it cannot write (retry.Policy.String's "custom").
func RetryPolicyOf(p retry.Policy) *RetryPolicy {
	r := &RetryPolicy{MaxAttempts: int64(p.MaxAttempts), Unlimited: p.MaxAttempts == 0, ExplicitOnly: p.ExplicitOnly}
	if p.MaxElapsed > 0 {
		r.MaxElapsed = durationpb.New(p.MaxElapsed)
	}
	ok := true
	if p.Backoff != nil {
		r.Backoff, ok = backoffPB(p.Backoff)
	}
	for _, ec := range []ErrorClass{ErrorClass_ERROR_CLASS_TRANSIENT, ErrorClass_ERROR_CLASS_UNCLASSIFIED, ErrorClass_ERROR_CLASS_AFTER, ErrorClass_ERROR_CLASS_RESOURCE} {
		cp, found := p.Classes[classes[ec]]
		if !found {
			continue
		}
		c := &ClassRetry{ErrorClass: ec, MaxAttempts: int64(cp.MaxAttempts), Unlimited: cp.MaxAttempts == 0}
		if cp.Backoff != nil {
			var cok bool
			c.Backoff, cok = backoffPB(cp.Backoff)
			ok = ok && cok
		}
		r.Classes = append(r.Classes, c)
	}
	if !ok {
		return nil
	}
	return r
}

func backoffPB(b retry.Backoff) (*Backoff, bool) {
	switch v := b.(type) {
	case retry.Constant:
		return &Backoff{Initial: durationpb.New(v.Interval)}, true
	case retry.Exponential:
		j := map[retry.Jitter]Jitter{retry.JitterFull: Jitter_JITTER_FULL, retry.JitterEqual: Jitter_JITTER_EQUAL, retry.JitterNone: Jitter_JITTER_NONE}[v.Jitter]
		m := v.Multiplier
		if m == 2 {
			m = 0
		}
		return &Backoff{Initial: durationpb.New(orDefault(v.Min, time.Second)), Max: durationpb.New(orDefault(v.Max, time.Duration(math.MaxInt64))), Multiplier: m, Jitter: j}, true
	case retry.Decorrelated:
		return &Backoff{Initial: durationpb.New(orDefault(v.Min, time.Second)), Max: durationpb.New(orDefault(v.Max, time.Duration(math.MaxInt64))), Jitter: Jitter_JITTER_DECORRELATED}, true
	}
	return nil, false
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
