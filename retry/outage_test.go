package retry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/retry"
)

// closedAddr returns the address of a TCP port on 127.0.0.1 that nothing
// listens on: dialing it is refused at once.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// listen returns a listener whose connections serve runs on, closed with
// the test.
func listen(t *testing.T, serve func(net.Conn)) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return ln
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// realOutages makes each failure for real, on 127.0.0.1.
func realOutages(t *testing.T) map[string]error {
	errs := map[string]error{}

	_, err := net.DialTimeout("tcp", closedAddr(t), 5*time.Second)
	errs["refused dial"] = err

	_, err = http.Get("http://" + closedAddr(t) + "/charge")
	errs["refused HTTP request"] = err

	_, err = (&net.Dialer{Deadline: time.Now().Add(-time.Second)}).Dial("tcp", closedAddr(t))
	errs["dial timeout"] = err

	silent := listen(t, func(c net.Conn) { defer c.Close(); _, _ = io.Copy(io.Discard, c) })
	c := dial(t, silent.Addr().String())
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	_, err = c.Read(make([]byte, 1))
	errs["read i/o timeout"] = err

	reset := listen(t, func(c net.Conn) {
		_, _ = c.Read(make([]byte, 1)) // once the dial is surely done
		_ = c.(*net.TCPConn).SetLinger(0)
		c.Close() // with a RST
	})
	c = dial(t, reset.Addr().String())
	_, _ = c.Write([]byte{1})
	_, err = c.Read(make([]byte, 1))
	errs["connection reset"] = err

	short := listen(t, func(c net.Conn) { _, _ = c.Write([]byte{1}); c.Close() })
	_, err = io.ReadFull(dial(t, short.Addr().String()), make([]byte, 8))
	errs["unexpected EOF"] = err

	hangUp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _, _ := w.(http.Hijacker).Hijack()
		c.Close() // no answer at all
	}))
	t.Cleanup(hangUp.Close)
	_, err = http.Get(hangUp.URL)
	errs["HTTP server hung up (EOF)"] = err

	tlsSilent := listen(t, func(c net.Conn) { defer c.Close(); _, _ = io.Copy(io.Discard, c) })
	tr := &http.Transport{TLSHandshakeTimeout: 20 * time.Millisecond}
	t.Cleanup(tr.CloseIdleConnections)
	_, err = (&http.Client{Transport: tr}).Get("https://" + tlsSilent.Addr().String())
	errs["TLS handshake timeout"] = err

	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	<-ctx.Done()
	errs["downstream deadline"] = fmt.Errorf("call ledger: %w", ctx.Err())
	return errs
}

func TestRealOutagesAreTransient(t *testing.T) {
	t.Parallel()
	for name, err := range realOutages(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if err == nil {
				t.Fatal("the failure did not happen")
			}
			if class, _ := retry.Classify(err); class != retry.ClassTransient {
				t.Errorf("Classify(%v) = %v, want transient", err, class)
			}
			if class, _ := retry.Marked(err); class != retry.Unclassified {
				t.Errorf("Marked(%v) = %v, want unclassified: nothing marks it", err, class)
			}
			if class, _ := retry.Classify(retry.Permanent(err)); class != retry.ClassPermanent {
				t.Errorf("a Permanent mark does not win over inference: %v", class)
			}
		})
	}
}

// grpcStatus and grpcCodeT have the shape of grpc-go's *status.Status and
// codes.Code, which retry may not import: the package reads them through
// the methods.
type grpcCodeT uint32

type grpcStatus struct{ code grpcCodeT }

func (s *grpcStatus) Code() grpcCodeT { return s.code }

type grpcError struct{ s *grpcStatus }

func (e *grpcError) Error() string           { return fmt.Sprintf("rpc error: code = %d", e.s.code) }
func (e *grpcError) GRPCStatus() *grpcStatus { return e.s }
func grpcErr(code grpcCodeT) error           { return &grpcError{&grpcStatus{code}} }
func opErr(op string, errno syscall.Errno) error {
	return &net.OpError{Op: op, Net: "tcp", Err: os.NewSyscallError(op, errno)}
}
func dnsErr(d net.DNSError) error { return &d }
func wrapped(err error) error     { return fmt.Errorf("call payments: %w", err) }
func jsonEOF() error              { return json.NewDecoder(bytes.NewReader(nil)).Decode(&struct{}{}) }

func TestClassifyInfers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want retry.Class
	}{
		{"broken pipe", wrapped(opErr("write", syscall.EPIPE)), retry.ClassTransient},
		{"connection aborted", opErr("read", syscall.ECONNABORTED), retry.ClassTransient},
		{"host unreachable", opErr("dial", syscall.EHOSTUNREACH), retry.ClassTransient},
		{"network unreachable", opErr("dial", syscall.ENETUNREACH), retry.ClassTransient},
		{"network down", opErr("dial", syscall.ENETDOWN), retry.ClassTransient},
		{"timed out", opErr("dial", syscall.ETIMEDOUT), retry.ClassTransient},
		{"bare errno", syscall.ECONNREFUSED, retry.ClassTransient},
		{"permission denied", opErr("dial", syscall.EACCES), retry.Unclassified},
		{"try again is no outage", fmt.Errorf("fork: %w", syscall.EAGAIN), retry.Unclassified},
		{"DNS timeout", wrapped(dnsErr(net.DNSError{Err: "i/o timeout", Name: "ledger", IsTimeout: true})), retry.ClassTransient},
		{"DNS server failure", dnsErr(net.DNSError{Err: "server misbehaving", Name: "ledger", IsTemporary: true}), retry.ClassTransient},
		{"no such host", dnsErr(net.DNSError{Err: "no such host", Name: "ledgr", IsNotFound: true}), retry.Unclassified},
		{"i/o timeout", os.ErrDeadlineExceeded, retry.ClassTransient},
		{"EOF on a connection", &net.OpError{Op: "read", Net: "tcp", Err: io.EOF}, retry.ClassTransient},
		{"bare EOF", io.EOF, retry.Unclassified},
		{"decoding an empty body", wrapped(jsonEOF()), retry.Unclassified},
		{"unexpected EOF", wrapped(io.ErrUnexpectedEOF), retry.ClassTransient},
		{"joined with a bug", errors.Join(errors.New("bug"), opErr("dial", syscall.ECONNREFUSED)), retry.ClassTransient},
		{"gRPC UNAVAILABLE", wrapped(grpcErr(14)), retry.ClassTransient},
		{"gRPC DEADLINE_EXCEEDED", grpcErr(4), retry.ClassTransient},
		{"gRPC INVALID_ARGUMENT", wrapped(grpcErr(3)), retry.Unclassified},
		{"gRPC UNKNOWN", grpcErr(2), retry.Unclassified},
		{"nil gRPC status", &grpcError{}, retry.Unclassified},
		{"canceled wins", &net.OpError{Op: "dial", Net: "tcp", Err: context.Canceled}, retry.ClassCanceled},
		{"marked permanent", retry.Permanent(opErr("dial", syscall.ECONNREFUSED)), retry.ClassPermanent},
		{"a plain message is not an errno", errors.New("dial tcp: connect: connection refused"), retry.Unclassified},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got, _ := retry.Classify(tt.err); got != tt.want {
				t.Errorf("Classify(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// TestOutageIsNeverPoison: the same refused connection twice in a row is
// retried, where the same unmarked bug twice is poison.
func TestOutageIsNeverPoison(t *testing.T) {
	t.Parallel()
	_, refused := net.DialTimeout("tcp", closedAddr(t), 5*time.Second)
	p := retry.MustParse("10 1s 1m")
	now := time.Now()
	if d := p.Decide(retry.Attempt{Number: 2, Err: refused, Streak: 2}, now); !d.Retry {
		t.Errorf("a refused connection twice: %v, want a retry", d.Reason)
	}
	if d := p.Decide(retry.Attempt{Number: 2, Err: errors.New("KeyError: 42"), Streak: 2}, now); d.Reason != retry.ReasonPoison {
		t.Errorf("the same bug twice: %v, want poison", d.Reason)
	}
	explicit := retry.MustParse("10 1s 1m explicit_only")
	if d := explicit.Decide(retry.Attempt{Number: 1, Err: refused}, now); d.Retry {
		t.Error("explicit-only retried a refused connection nobody marked")
	}
}
