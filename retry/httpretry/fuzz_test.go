package httpretry

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/retry"
)

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{
		"0", "120", " 7\t", "-1", "+1", "1.5", "", "9223372036", "9223372037",
		"99999999999999999999", "Tue, 21 Oct 2025 07:29:30 GMT",
		"Tuesday, 21-Oct-25 07:29:30 GMT", "Tue Oct 21 07:29:30 2025",
		"Fri, 31 Dec 9999 23:59:59 GMT", "Mon, 01 Jan 0001 00:00:00 GMT", "\x00",
	} {
		f.Add(s, now.Unix())
	}
	f.Fuzz(func(t *testing.T, v string, unix int64) {
		at := time.Unix(unix, 0)
		d, ok := ParseRetryAfter(v, at)
		if !ok {
			if d != 0 {
				t.Fatalf("ParseRetryAfter(%q) = %v, false; want 0 with false", v, d)
			}
			return
		}
		if d < 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v, negative", v, d)
		}
		trimmed := strings.Trim(v, " \t")
		if again, ok := ParseRetryAfter(" \t"+trimmed+"\t ", at); !ok || again != d {
			t.Fatalf("padding %q changed the result: %v, %v; want %v", v, again, ok, d)
		}
		if n, err := strconv.ParseUint(trimmed, 10, 64); err == nil {
			if time.Duration(n)*time.Second != d || !isDigits(trimmed) {
				t.Fatalf("ParseRetryAfter(%q) = %v, want %d seconds", v, d, n)
			}
			return
		}
		if _, err := http.ParseTime(trimmed); err != nil {
			t.Fatalf("ParseRetryAfter accepted %q, which is neither seconds nor an HTTP-date", v)
		}
	})
}

// FuzzClassify checks that any status and Retry-After get a class that
// agrees with the status's family, a bounded delay and an intact
// StatusError.
func FuzzClassify(f *testing.F) {
	f.Add(503, "2")
	f.Add(429, "Tue, 21 Oct 2025 07:29:30 GMT")
	f.Add(429, "99999999999")
	f.Add(200, "")
	f.Add(-1, "x")
	f.Add(1000, "")
	f.Fuzz(func(t *testing.T, code int, retryAfter string) {
		resp := &http.Response{StatusCode: code, Header: http.Header{"Retry-After": {retryAfter}}}
		err := Classify(resp, nil, now)
		if code < 400 {
			if err != nil {
				t.Fatalf("status %d: %v, want nil", code, err)
			}
			return
		}
		var se *StatusError
		if !errors.As(err, &se) || se.Code != code || !strings.HasPrefix(se.Error(), "httpretry: ") {
			t.Fatalf("status %d: %#v holds no proper StatusError", code, err)
		}
		class, d := retry.Classify(err)
		if d < 0 || d > MaxRetryAfter || d != se.RetryAfter {
			t.Fatalf("status %d, Retry-After %q: delay %v, StatusError says %v", code, retryAfter, d, se.RetryAfter)
		}
		_, hasDelay := ParseRetryAfter(retryAfter, now)
		switch {
		case code >= 600:
			if class != retry.Unclassified {
				t.Fatalf("status %d: %v, want unclassified", code, class)
			}
		case (code == 429 || code == 503) && hasDelay:
			if class != retry.ClassAfter {
				t.Fatalf("status %d, Retry-After %q: %v, want after", code, retryAfter, class)
			}
		case class != retry.ClassTransient && class != retry.ClassPermanent:
			t.Fatalf("status %d: %v, want transient or permanent", code, class)
		case code >= 500 && code != 501 && code != 505 && class != retry.ClassTransient:
			t.Fatalf("status %d: %v, want transient", code, class)
		}
	})
}
