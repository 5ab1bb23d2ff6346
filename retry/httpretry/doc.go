// Package httpretry teaches grit's retry core about HTTP, with the standard
// library alone.
//
// [Classify] takes what an HTTP client returned (a response or a transport
// error) and marks it with the [retry] mark it deserves: transport failures
// are transient, 5xx (but 501 and 505) and 408 are transient, 429 and 503
// with a Retry-After header are retried after that delay, and other 4xx are
// permanent. A failed response becomes a [*StatusError] that names the
// request and the status.
//
// [ParseRetryAfter] reads a Retry-After value, delta-seconds or HTTP-date.
//
// Neither reads nor closes a response body: draining and closing it stays
// with the caller, who alone knows whether it is still wanted.
package httpretry
