package retry_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/retry"
)

func TestParseValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want retry.Policy
		str  string
	}{
		{"5s", retry.Policy{Backoff: retry.Constant{Interval: 5 * time.Second}}, "5s"},
		{"5s 10m", retry.Policy{Backoff: retry.Exponential{Min: 5 * time.Second, Max: 10 * time.Minute}}, "5s 10m"},
		{"10 5s", retry.Policy{MaxAttempts: 11, Backoff: retry.Constant{Interval: 5 * time.Second}}, "10 5s"},
		{"10 5s 10m", retry.Policy{MaxAttempts: 11, Backoff: retry.Exponential{Min: 5 * time.Second, Max: 10 * time.Minute}}, "10 5s 10m"},
		{"  3   1s   30s  ", retry.Policy{MaxAttempts: 4, Backoff: retry.Exponential{Min: time.Second, Max: 30 * time.Second}}, "3 1s 30s"},
		{"never", retry.Never, "never"},
		{"NEVER", retry.Never, "never"},
		{"0 1s", retry.Never, "never"},
		{"0 1s 1m jitter=none", retry.Never, "never"},
		{"3 1s 1m multiplier=2", retry.Policy{MaxAttempts: 4, Backoff: retry.Exponential{Min: time.Second, Max: time.Minute}}, "3 1s 1m"},
		{"3 1s explicit_only", retry.Policy{MaxAttempts: 4, Backoff: retry.Constant{Interval: time.Second}, ExplicitOnly: true}, "3 1s explicit_only"},
		{"never explicit_only", retry.Policy{MaxAttempts: 1, ExplicitOnly: true}, "never explicit_only"},
		{"5 1s 1m transient=20,2s,5m", retry.Policy{MaxAttempts: 6, Backoff: retry.Exponential{Min: time.Second, Max: time.Minute},
			Classes: map[retry.Class]retry.ClassPolicy{retry.ClassTransient: {MaxAttempts: 21, Backoff: retry.Exponential{Min: 2 * time.Second, Max: 5 * time.Minute}}}},
			"5 1s 1m transient=20,2s,5m"},
		{"never transient=5s", retry.Policy{MaxAttempts: 1, Classes: map[retry.Class]retry.ClassPolicy{retry.ClassTransient: {Backoff: retry.Constant{Interval: 5 * time.Second}}}},
			"never transient=5s"},
		{"4 1s 1m resource=1m,10m,none unclassified=never after=2,1s,1m,decorrelated transient=1s,1m,equal max_elapsed=1h",
			retry.Policy{MaxAttempts: 5, Backoff: retry.Exponential{Min: time.Second, Max: time.Minute}, MaxElapsed: time.Hour,
				Classes: map[retry.Class]retry.ClassPolicy{
					retry.ClassResource:  {Backoff: retry.Exponential{Min: time.Minute, Max: 10 * time.Minute, Jitter: retry.JitterNone}},
					retry.Unclassified:   {MaxAttempts: 1},
					retry.ClassAfter:     {MaxAttempts: 3, Backoff: retry.Decorrelated{Min: time.Second, Max: time.Minute}},
					retry.ClassTransient: {Backoff: retry.Exponential{Min: time.Second, Max: time.Minute, Jitter: retry.JitterEqual}},
				}},
			"4 1s 1m max_elapsed=1h transient=1s,1m,equal unclassified=never after=2,1s,1m,decorrelated resource=1m,10m,none"},
		{"3 1s transient=0,5s transient=7,2s", retry.Policy{MaxAttempts: 4, Backoff: retry.Constant{Interval: time.Second},
			Classes: map[retry.Class]retry.ClassPolicy{retry.ClassTransient: {MaxAttempts: 8, Backoff: retry.Constant{Interval: 2 * time.Second}}}},
			"3 1s transient=7,2s"},
		{"1h30m", retry.Policy{Backoff: retry.Constant{Interval: 90 * time.Minute}}, "1h30m"},
		{"250ms 1.5s", retry.Policy{Backoff: retry.Exponential{Min: 250 * time.Millisecond, Max: 1500 * time.Millisecond}}, "250ms 1.5s"},
		{"3 1s 1m jitter=equal", retry.Policy{MaxAttempts: 4, Backoff: retry.Exponential{Min: time.Second, Max: time.Minute, Jitter: retry.JitterEqual}}, "3 1s 1m jitter=equal"},
		{"1s 1m jitter=none multiplier=1.5", retry.Policy{Backoff: retry.Exponential{Min: time.Second, Max: time.Minute, Jitter: retry.JitterNone, Multiplier: 1.5}}, "1s 1m multiplier=1.5 jitter=none"},
		{"5 100ms 10s jitter=decorrelated", retry.Policy{MaxAttempts: 6, Backoff: retry.Decorrelated{Min: 100 * time.Millisecond, Max: 10 * time.Second}}, "5 100ms 10s jitter=decorrelated"},
		{"4 1s 1m max_elapsed=5m", retry.Policy{MaxAttempts: 5, Backoff: retry.Exponential{Min: time.Second, Max: time.Minute}, MaxElapsed: 5 * time.Minute}, "4 1s 1m max_elapsed=5m"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := retry.Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Parse = %#v, want %#v", got, tt.want)
			}
			if s := got.String(); s != tt.str {
				t.Errorf("String() = %q, want %q", s, tt.str)
			}
			again, err := retry.Parse(got.String())
			if err != nil || again.String() != got.String() {
				t.Errorf("round trip: Parse(%q) = %v, %v", got.String(), again, err)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		part string // the quoted bad part the error must name
		says string
	}{
		{"", "", "is empty"},
		{"   ", "", "is empty"},
		{"10", "", "has no delay after its count"},
		{"10 5x", "5x", "is not a duration"},
		{"5", "", "has no delay"},
		{"-1 5s", "-1", "is not a retry count"},
		{"99999999999999999999 5s", "99999999999999999999", "is not a retry count"},
		{"5s 1s", "1s", "is below the minimum"},
		{"0s", "0s", "longer than zero"},
		{"-5s", "-5s", "longer than zero"},
		{"1 2s 3s 4s", "4s", "one field too many"},
		{"never 5s", "never", "is not a duration"},
		{"5s jitter=full", "jitter=full", "needs a min and a max"},
		{"5s 1m jitter=half", "jitter=half", "is not a jitter"},
		{"5s 1m multiplier=0.5", "multiplier=0.5", "from 1 to 1000"},
		{"5s 1m multiplier=NaN", "multiplier=NaN", "from 1 to 1000"},
		{"5s 1m color=red", "color=red", "is not an option"},
		{"5s 1m max_elapsed=soon", "soon", "is not a duration"},
		{"5s jitter=none 1m", "1m", "is not an option"},
		{"explicit_only", "", "has no delay before its options"},
		{"3 1s explicit_only=true", "explicit_only=true", "takes no value"},
		{"3 1s explicit_only unclassified=1,1s", "unclassified=1,1s", "has no effect with explicit_only"},
		{"3 1s permanent=1,1s", "permanent=1,1s", "is not an option"},
		{"3 1s transient=", "transient=", "has no schedule"},
		{"3 1s transient=20,5x", "transient=20,5x", `has "5x", which is not a duration`},
		{"3 1s transient=20", "transient=20", "has no delay after its count"},
		{"3 1s transient=1s,2s,3s", "transient=1s,2s,3s", `has "3s", which is one field too many`},
		{"3 1s transient=5s,1s", "transient=5s,1s", "is below the minimum"},
		{"3 1s transient=5s,equal", "transient=5s,equal", "needs a min and a max delay before its jitter"},
		{"3 1s transient=never,5s", "transient=never,5s", `has "never", which is not a duration`},
		{"3 1s transient=-1,5s", "transient=-1,5s", "is not a retry count"},
		{"3 1s transient=equal", "transient=equal", "has no delay;"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			_, err := retry.Parse(tt.in)
			if err == nil {
				t.Fatal("Parse did not fail")
			}
			var pe *retry.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError", err)
			}
			msg := err.Error()
			if tt.part != "" && !strings.Contains(msg, `"`+tt.part+`"`) {
				t.Errorf("error %q does not quote the bad part %q", msg, tt.part)
			}
			if !strings.Contains(msg, tt.says) {
				t.Errorf("error %q does not say %q", msg, tt.says)
			}
			if !strings.Contains(msg, `e.g. "10 5s 10m"`) {
				t.Errorf("error %q shows no correct example", msg)
			}
		})
	}
}

func TestPresetStrings(t *testing.T) {
	t.Parallel()
	for _, p := range []retry.Policy{retry.CommonFourTimes, retry.CommonForever, retry.Never, {}} {
		q, err := retry.Parse(p.String())
		if err != nil {
			t.Fatalf("Parse(%q): %v", p.String(), err)
		}
		if q.String() != p.String() || q.MaxAttempts != p.MaxAttempts {
			t.Errorf("%q round-tripped to %q", p.String(), q.String())
		}
	}
	if got := retry.CommonFourTimes.String(); got != "4 1s 1m" {
		t.Errorf("CommonFourTimes = %q", got)
	}
}

func TestMustParsePanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("MustParse of a bad string did not panic")
		}
	}()
	retry.MustParse("soon")
}

// FuzzParse checks that Parse never panics, that its errors always quote the
// input, and that String is a fixed point: Parse(p.String()) writes back the
// same string.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"5s", "5s 10m", "10 5s", "10 5s 10m", "never", "3 1s 30s jitter=equal",
		"1s 1m multiplier=3 jitter=none", "2 1ms 1h jitter=decorrelated max_elapsed=2h", "10 5x", "", "0 0s", "1e3 5s",
		"5 1s 1m transient=20,2s,5m", "never transient=5s explicit_only", "3 1s explicit_only",
		"4 1s 1m resource=1m,10m,none unclassified=never after=2,1s,1m,decorrelated transient=1s,1m,equal",
		"3 1s transient=0,5s", "0 1s multiplier=2", "3 1s transient=", "1s unclassified=2,1s explicit_only"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := retry.Parse(s)
		if err != nil {
			if !strings.Contains(err.Error(), "e.g.") {
				t.Fatalf("error without an example: %v", err)
			}
			return
		}
		str := p.String()
		q, err := retry.Parse(str)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its String %q does not parse: %v", s, str, err)
		}
		if q.String() != str || !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip of %q: %#v, written %q, read back as %#v", s, p, str, q)
		}
		d := p.Decide(retry.Attempt{Number: 1, Err: errBoom}, time.Time{})
		if d.Retry && d.Delay < 0 {
			t.Fatalf("policy %q chose a negative delay %v", s, d.Delay)
		}
	})
}
