package gritv1_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/retry"
)

// TestRetryPolicyRoundTrip: every policy a string can say comes back the
// same through its fields, and the fields through the string.
func TestRetryPolicyRoundTrip(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"never",
		"5s",
		"10 5s",
		"10 5s 10m",
		"3 1s 30s jitter=equal multiplier=3",
		"3 1s 30s jitter=none max_elapsed=1h",
		"4 100ms 1m jitter=decorrelated",
		"5 1s 1m transient=20,2s,5m unclassified=never after=1s resource=3,1m,5m,equal",
		"never transient=5s",
		"3 1s explicit_only",
		"5s 10m",
	} {
		p := retry.MustParse(s)
		r := pb.RetryPolicyOf(p)
		if r == nil {
			t.Fatalf("%q: no fields", s)
		}
		back, err := proto.Clone(r).(*pb.RetryPolicy).Policy()
		if err != nil {
			t.Fatalf("%q: %v: its fields %v are refused", s, err, r)
		}
		if back.String() != p.String() {
			t.Errorf("%q: through its fields %v it is %q", s, r, back.String())
		}
	}
}

func d(v time.Duration) *durationpb.Duration { return durationpb.New(v) }

// TestRetryPolicyFields: a policy given as fields is the same as its
// string, and a wrong field is named.
func TestRetryPolicyFields(t *testing.T) {
	t.Parallel()
	r := &pb.RetryPolicy{MaxAttempts: 11, Backoff: &pb.Backoff{Initial: d(5 * time.Second), Max: d(10 * time.Minute)},
		Classes: []*pb.ClassRetry{{ErrorClass: pb.ErrorClass_ERROR_CLASS_TRANSIENT, Unlimited: true, Backoff: &pb.Backoff{Initial: d(time.Second)}}}}
	p, err := r.Policy()
	if err != nil || p.String() != "10 5s 10m transient=1s" {
		t.Fatalf("%v: %q (%v), want 10 5s 10m transient=1s", r, p.String(), err)
	}
	if p, err := (&pb.RetryPolicy{MaxAttempts: 1}).Policy(); err != nil || p.String() != "never" {
		t.Errorf("max_attempts 1: %q (%v), want never", p.String(), err)
	}
	for _, tt := range []struct {
		r          *pb.RetryPolicy
		field, say string
	}{
		{&pb.RetryPolicy{}, "max_attempts", "missing"},
		{&pb.RetryPolicy{MaxAttempts: 3, Unlimited: true}, "unlimited", "set with max_attempts 3"},
		{&pb.RetryPolicy{MaxAttempts: -1}, "max_attempts", "want 1 to"},
		{&pb.RetryPolicy{MaxAttempts: 3}, "backoff", "missing"},
		{&pb.RetryPolicy{MaxAttempts: 3, Backoff: &pb.Backoff{}}, "backoff.initial", "missing"},
		{&pb.RetryPolicy{MaxAttempts: 3, Backoff: &pb.Backoff{Initial: d(-time.Second)}}, "backoff.initial", "positive"},
		{&pb.RetryPolicy{MaxAttempts: 3, Backoff: &pb.Backoff{Initial: d(time.Minute), Max: d(time.Second)}}, "backoff.max", "below initial"},
		{&pb.RetryPolicy{MaxAttempts: 3, Backoff: &pb.Backoff{Initial: d(time.Second), Jitter: pb.Jitter_JITTER_EQUAL}}, "backoff.max", "needs a max"},
		{&pb.RetryPolicy{MaxAttempts: 3, Backoff: &pb.Backoff{Initial: d(time.Second), Max: d(time.Minute), Multiplier: 0.5}}, "backoff.multiplier", "1 or more"},
		{&pb.RetryPolicy{MaxAttempts: 3, Backoff: &pb.Backoff{Initial: d(time.Second), Max: d(time.Minute), Multiplier: 3, Jitter: pb.Jitter_JITTER_DECORRELATED}}, "backoff.multiplier", "decorrelated"},
		{&pb.RetryPolicy{MaxAttempts: 3, Backoff: &pb.Backoff{Initial: d(time.Second), Max: d(time.Minute), Jitter: 9}}, "backoff.jitter", "want JITTER_FULL"},
		{&pb.RetryPolicy{MaxAttempts: 3, Backoff: &pb.Backoff{Initial: d(time.Second)}, MaxElapsed: d(0)}, "max_elapsed", "positive"},
		{&pb.RetryPolicy{MaxAttempts: 1, Classes: []*pb.ClassRetry{{ErrorClass: pb.ErrorClass_ERROR_CLASS_PERMANENT, MaxAttempts: 1}}}, "classes[0].error_class", "want ERROR_CLASS_TRANSIENT"},
		{&pb.RetryPolicy{MaxAttempts: 1, Classes: []*pb.ClassRetry{{ErrorClass: pb.ErrorClass_ERROR_CLASS_AFTER, MaxAttempts: 1}, {ErrorClass: pb.ErrorClass_ERROR_CLASS_AFTER, MaxAttempts: 1}}}, "classes[1].error_class", "twice"},
		{&pb.RetryPolicy{MaxAttempts: 1, Classes: []*pb.ClassRetry{{ErrorClass: pb.ErrorClass_ERROR_CLASS_TRANSIENT}}}, "classes[0].max_attempts", "missing"},
		{&pb.RetryPolicy{MaxAttempts: 1, Classes: []*pb.ClassRetry{{ErrorClass: pb.ErrorClass_ERROR_CLASS_TRANSIENT, MaxAttempts: 3, Backoff: &pb.Backoff{Initial: d(time.Second), Max: d(time.Minute), Multiplier: 3}}}}, "classes[0].backoff.multiplier", "leave it 0"},
	} {
		_, err := tt.r.Policy()
		var pe *pb.PolicyError
		if !errors.As(err, &pe) || pe.Field != tt.field || !strings.Contains(pe.Msg, tt.say) {
			t.Errorf("%v: %v, want %s: …%s…", tt.r, err, tt.field, tt.say)
		}
	}
}

// FuzzRetryPolicy: whatever fields come, Policy answers (no panic), and
// what it accepts comes back the same through RetryPolicyOf.
func FuzzRetryPolicy(f *testing.F) {
	for _, s := range []string{"never", "10 5s 10m", "5 1s 1m transient=20,2s,5m resource=never", "4 100ms 1m jitter=decorrelated max_elapsed=1h"} {
		b, _ := proto.Marshal(pb.RetryPolicyOf(retry.MustParse(s)))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r pb.RetryPolicy
		if proto.Unmarshal(b, &r) != nil {
			return
		}
		p, err := r.Policy()
		if err != nil {
			return
		}
		back, err := pb.RetryPolicyOf(p).Policy()
		if err != nil || back.String() != p.String() {
			t.Fatalf("%v: %q, through its fields %q (%v)", &r, p.String(), back.String(), err)
		}
	})
}
