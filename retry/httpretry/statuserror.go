package httpretry

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// StatusError is a response whose status means the request failed (4xx or
// 5xx). [Classify] returns it inside the [retry] mark it deserves; find it
// with errors.As.
type StatusError struct {
	// Code is the status code, e.g. 503.
	Code int
	// Status is the status line as received, e.g. "503 Service Unavailable".
	Status string
	// Method and URL name the request, when the response carried it; the
	// URL's password, if any, is redacted.
	Method, URL string
	// RetryAfter is the delay a 429 or 503 asked for with Retry-After,
	// capped at [MaxRetryAfter]; 0 when there was none.
	RetryAfter time.Duration
}

// newStatusError describes resp, without its body.
func newStatusError(resp *http.Response) *StatusError {
	e := &StatusError{Code: resp.StatusCode, Status: resp.Status}
	if e.Status == "" {
		e.Status = strings.TrimSpace(strconv.Itoa(resp.StatusCode) + " " + http.StatusText(resp.StatusCode))
	}
	if req := resp.Request; req != nil {
		e.Method = req.Method
		if e.Method == "" {
			e.Method = http.MethodGet
		}
		if req.URL != nil {
			e.URL = req.URL.Redacted()
		}
	}
	return e
}

// Error reads like "httpretry: POST https://x/y: 503 Service Unavailable
// (retry after 2s)".
func (e *StatusError) Error() string {
	var b strings.Builder
	b.WriteString("httpretry: ")
	if e.Method != "" || e.URL != "" {
		b.WriteString(strings.TrimSpace(e.Method + " " + e.URL))
		b.WriteString(": ")
	}
	b.WriteString(e.Status)
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %v)", e.RetryAfter)
	}
	return b.String()
}
