package httpretry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/retry"
)

func response(code int, retryAfter string) *http.Response {
	h := http.Header{}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	u, _ := url.Parse("https://api.example/v1/send")
	return &http.Response{
		StatusCode: code,
		Status:     fmt.Sprintf("%d %s", code, http.StatusText(code)),
		Header:     h,
		Request:    &http.Request{Method: http.MethodPost, URL: u},
	}
}

func TestClassifyStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code       int
		retryAfter string
		wantNil    bool
		wantClass  retry.Class
		wantDelay  time.Duration
	}{
		{code: 100, wantNil: true},
		{code: 101, wantNil: true},
		{code: 200, wantNil: true},
		{code: 204, wantNil: true},
		{code: 299, wantNil: true},
		{code: 301, wantNil: true},
		{code: 304, wantNil: true},
		{code: 399, retryAfter: "5", wantNil: true},
		{code: 400, wantClass: retry.ClassPermanent},
		{code: 401, wantClass: retry.ClassPermanent},
		{code: 403, wantClass: retry.ClassPermanent},
		{code: 404, wantClass: retry.ClassPermanent},
		{code: 408, wantClass: retry.ClassTransient},
		{code: 409, wantClass: retry.ClassPermanent},
		{code: 422, wantClass: retry.ClassPermanent},
		{code: 429, wantClass: retry.ClassTransient},
		{code: 429, retryAfter: "2", wantClass: retry.ClassAfter, wantDelay: 2 * time.Second},
		{code: 429, retryAfter: "0", wantClass: retry.ClassAfter, wantDelay: 0},
		{code: 429, retryAfter: "Tue, 21 Oct 2025 07:29:00 GMT", wantClass: retry.ClassAfter, wantDelay: time.Minute},
		{code: 429, retryAfter: "Tue, 21 Oct 2025 07:00:00 GMT", wantClass: retry.ClassAfter, wantDelay: 0},
		{code: 429, retryAfter: "86400", wantClass: retry.ClassAfter, wantDelay: MaxRetryAfter},
		{code: 429, retryAfter: "soon", wantClass: retry.ClassTransient},
		{code: 429, retryAfter: "-5", wantClass: retry.ClassTransient},
		{code: 451, wantClass: retry.ClassPermanent},
		{code: 499, wantClass: retry.ClassPermanent},
		{code: 500, wantClass: retry.ClassTransient},
		{code: 500, retryAfter: "5", wantClass: retry.ClassTransient},
		{code: 501, wantClass: retry.ClassPermanent},
		{code: 502, wantClass: retry.ClassTransient},
		{code: 503, wantClass: retry.ClassTransient},
		{code: 503, retryAfter: "120", wantClass: retry.ClassAfter, wantDelay: 2 * time.Minute},
		{code: 504, wantClass: retry.ClassTransient},
		{code: 505, wantClass: retry.ClassPermanent},
		{code: 507, wantClass: retry.ClassTransient},
		{code: 599, wantClass: retry.ClassTransient},
		{code: 600, wantClass: retry.Unclassified},
		{code: 999, wantClass: retry.Unclassified},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d %s", tt.code, tt.retryAfter), func(t *testing.T) {
			t.Parallel()
			got := Classify(response(tt.code, tt.retryAfter), nil, now)
			if tt.wantNil {
				if got != nil {
					t.Fatalf("Classify = %v, want nil", got)
				}
				return
			}
			class, delay := retry.Classify(got)
			if class != tt.wantClass || delay != tt.wantDelay {
				t.Errorf("retry.Classify = %v, %v; want %v, %v", class, delay, tt.wantClass, tt.wantDelay)
			}
			var se *StatusError
			if !errors.As(got, &se) {
				t.Fatalf("Classify = %#v, holds no *StatusError", got)
			}
			if se.Code != tt.code || se.Method != "POST" || se.URL != "https://api.example/v1/send" || se.RetryAfter != tt.wantDelay {
				t.Errorf("StatusError = %+v", *se)
			}
		})
	}
}

func TestClassifyNothing(t *testing.T) {
	t.Parallel()
	if err := Classify(nil, nil, now); err != nil {
		t.Errorf("Classify(nil, nil) = %v, want nil", err)
	}
}

func opError(errno syscall.Errno) error {
	return &url.Error{Op: "Post", URL: "http://127.0.0.1:1/", Err: &net.OpError{
		Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errno),
	}}
}

func TestClassifyTransport(t *testing.T) {
	t.Parallel()
	redirected := response(302, "")
	tests := []struct {
		name      string
		resp      *http.Response
		err       error
		wantClass retry.Class
	}{
		{"connection refused", nil, opError(syscall.ECONNREFUSED), retry.ClassTransient},
		{"connection reset", nil, opError(syscall.ECONNRESET), retry.ClassTransient},
		{"host unreachable", nil, opError(syscall.EHOSTUNREACH), retry.ClassTransient},
		{"EOF", nil, &url.Error{Op: "Get", URL: "http://x/", Err: io.EOF}, retry.ClassTransient},
		{"unexpected EOF", nil, io.ErrUnexpectedEOF, retry.ClassTransient},
		{"deadline", nil, &url.Error{Op: "Get", URL: "http://x/", Err: context.DeadlineExceeded}, retry.ClassTransient},
		{"dns temporary", nil, &net.DNSError{Err: "server misbehaving", Name: "x", IsTemporary: true}, retry.ClassTransient},
		{"dns timeout", nil, &net.DNSError{Err: "i/o timeout", Name: "x", IsTimeout: true}, retry.ClassTransient},
		{"dns not found", nil, &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}, retry.ClassTransient},
		{"anything else", nil, errors.New("http2: server sent GOAWAY and closed the connection"), retry.ClassTransient},
		{"canceled", nil, &url.Error{Op: "Get", URL: "http://x/", Err: context.Canceled}, retry.ClassCanceled},
		{"already permanent", nil, retry.Permanent(opError(syscall.ECONNREFUSED)), retry.ClassPermanent},
		{"already after", nil, retry.After(io.EOF, time.Second), retry.ClassAfter},
		{"unknown authority", nil, &url.Error{Op: "Get", URL: "https://x/", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}, retry.Unclassified},
		{"bare hostname error", nil, x509.HostnameError{Certificate: &x509.Certificate{}, Host: "x"}, retry.Unclassified},
		{"expired", nil, x509.CertificateInvalidError{Cert: &x509.Certificate{}, Reason: x509.Expired}, retry.Unclassified},
		{"redirect policy", redirected, &url.Error{Op: "Get", URL: "http://x/", Err: errors.New("stopped after 10 redirects")}, retry.Unclassified},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Classify(tt.resp, tt.err, now)
			if class, _ := retry.Classify(got); class != tt.wantClass {
				t.Errorf("class = %v, want %v", class, tt.wantClass)
			}
			if !errors.Is(got, tt.err) || got.Error() != tt.err.Error() {
				t.Errorf("Classify = %v, lost the original %v", got, tt.err)
			}
			var se *StatusError
			if errors.As(got, &se) {
				t.Errorf("a transport error became a StatusError: %v", se)
			}
		})
	}
}
