package httpretry

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"time"

	"github.com/grit-run/grit/retry"
)

// Classify marks the outcome of one HTTP request, the response and error an
// http.Client or RoundTripper returned, with the [retry] mark it deserves.
// now is the time Retry-After dates are measured from; the zero now means
// time.Now().
//
// With an error (no answer was received):
//
//   - an error already marked, or context.Canceled: err as it is; the
//     caller gave up, and [retry.Classify] says ClassCanceled.
//   - a certificate that failed verification, or an error from the client's
//     redirect policy (the one case where a response comes with the error):
//     err as it is, unclassified. Both repeat until someone changes a
//     configuration, so they are left to poison detection, which moves the
//     task to DEAD_LETTER for an operator rather than failing it.
//   - any other transport error: [retry.Transient]. Refused or reset
//     connections, timeouts, an early EOF and DNS failures are all blips
//     that may repeat while a downstream restarts. A name that does not
//     resolve is included: in a cluster it often means "no ready endpoints
//     yet".
//
// With a response:
//
//   - status below 400: nil.
//   - 429 or 503 with a valid Retry-After: [retry.After] with its delay, at
//     least 0 and at most [MaxRetryAfter].
//   - 408, 429 and 503 without one, and every other 5xx but 501 and 505:
//     [retry.Transient].
//   - 501, 505 and every other 4xx: [retry.Permanent].
//   - a status of 600 or more, which HTTP does not define: unmarked.
//
// Each failed response is a [*StatusError] inside its mark. Classify neither
// reads nor closes the body. A nil response with a nil error is nil.
func Classify(resp *http.Response, err error, now time.Time) error {
	if err != nil {
		return classifyTransport(resp, err)
	}
	if resp == nil || resp.StatusCode < 400 {
		return nil
	}
	return classifyStatus(resp, now)
}

func classifyTransport(resp *http.Response, err error) error {
	if class, _ := retry.Marked(err); class != retry.Unclassified {
		return err // includes context.Canceled
	}
	if resp != nil || badCertificate(err) {
		return err
	}
	return retry.Transient(err)
}

// badCertificate reports whether err is a failed TLS certificate check.
func badCertificate(err error) bool {
	var (
		verify    *tls.CertificateVerificationError
		authority x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
	)
	return errors.As(err, &verify) || errors.As(err, &authority) ||
		errors.As(err, &hostname) || errors.As(err, &invalid)
}

func classifyStatus(resp *http.Response, now time.Time) error {
	e := newStatusError(resp)
	code := resp.StatusCode
	switch {
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		if d, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), now); ok {
			e.RetryAfter = min(d, MaxRetryAfter)
			return retry.After(e, e.RetryAfter)
		}
		return retry.Transient(e)
	case code == http.StatusRequestTimeout:
		// 408: the server gave up waiting for the request and closed the
		// connection before acting on it, so sending it again is safe and
		// usually works (the client was slow, or an idle connection was
		// reused just as the server dropped it).
		return retry.Transient(e)
	case code == http.StatusNotImplemented || code == http.StatusHTTPVersionNotSupported:
		// The server cannot do this at all; asking again changes nothing.
		return retry.Permanent(e)
	case code >= 500 && code < 600:
		return retry.Transient(e)
	case code >= 400 && code < 500:
		return retry.Permanent(e)
	}
	return e
}
