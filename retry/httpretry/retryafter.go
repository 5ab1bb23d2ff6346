package httpretry

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxRetryAfter caps the delay [Classify] honours from a Retry-After header.
// A longer value (a bug, a year-long date, a quota that resets tomorrow)
// would park the task for that long; past an hour grit asks again and lets
// the server answer anew.
const MaxRetryAfter = time.Hour

// ParseRetryAfter reads a Retry-After header value (RFC 9110, section
// 10.2.3): either delta-seconds, a non-negative whole number of seconds
// ("120"), or an HTTP-date ("Wed, 21 Oct 2015 07:28:00 GMT", in any of the
// three formats http.ParseTime accepts), which is turned into a delay from
// now; a date already past is a delay of 0. The zero now means time.Now().
//
// It is strict: surrounding spaces and tabs are allowed, but a sign, a
// fraction, a unit, any other text, or a number of seconds too large for a
// time.Duration gives false.
func ParseRetryAfter(value string, now time.Time) (time.Duration, bool) {
	v := strings.Trim(value, " \t")
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > math.MaxInt64/int64(time.Second) {
			return 0, false
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if now.IsZero() {
		now = time.Now()
	}
	return max(t.Sub(now), 0), true
}

func isDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
