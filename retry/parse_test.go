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
		{"0 1s", retry.Policy{MaxAttempts: 1, Backoff: retry.Constant{Interval: time.Second}}, "never"},
		{"1h30m", retry.Policy{Backoff: retry.Constant{Interval: 90 * time.Minute}}, "1h30m"},
		{"250ms 1.5s", retry.Policy{Backoff: retry.Exponential{Min: 250 * time.Millisecond, Max: 1500 * time.Millisecond}}, "250ms 1.5s"},
		{"3 1s 1m jitter=equal", retry.Policy{MaxAttempts: 4, Backoff: retry.Exponential{Min: time.Second, Max: time.Minute, Jitter: retry.JitterEqual}}, "3 1s 1m jitter=equal"},
		{"1s 1m jitter=none multiplier=1.5", retry.Policy{Backoff: retry.Exponential{Min: time.Second, Max: time.Minute, Jitter: retry.JitterNone, Multiplier: 1.5}}, "1s 1m multiplier=1.5 jitter=none"},
		{"5 100ms 10s jitter=decorrelated", retry.Policy{MaxAttempts: 6, Backoff: retry.Decorrelated{Min: 100 * time.Millisecond, Max: 10 * time.Second}}, "5 100ms 10s jitter=decorrelated"},
		{"4 1s 1m max_elapsed=5m", retry.Policy{MaxAttempts: 5, Backoff: retry.Exponential{Min: time.Second, Max: time.Minute}, MaxElapsed: 5 * time.Minute}, "4 1s 1m max_elapsed=5m"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
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
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
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
		"1s 1m multiplier=3 jitter=none", "2 1ms 1h jitter=decorrelated max_elapsed=2h", "10 5x", "", "0 0s", "1e3 5s"} {
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
		if q.String() != str || q.MaxAttempts != p.MaxAttempts || q.MaxElapsed != p.MaxElapsed {
			t.Fatalf("round trip of %q: %q then %q", s, str, q.String())
		}
		d := p.Decide(retry.Attempt{Number: 1, Err: errBoom}, time.Time{})
		if d.Retry && d.Delay < 0 {
			t.Fatalf("policy %q chose a negative delay %v", s, d.Delay)
		}
	})
}
