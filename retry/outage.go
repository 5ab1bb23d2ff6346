package retry

import (
	"io"
	"net"
	"net/url"
	"reflect"
	"sync"
	"syscall"
)

// outage reports whether err, which carries no mark, means the other side
// could not be reached or did not answer: the failures a downstream's
// restart, a network blip or an overloaded server cause, which repeat while
// the outage lasts and so must never be taken for poison. Any error in err's
// tree (errors.Join included) that is one is enough. The table in the package's
// README lists what counts.
func outage(err error) bool {
	return walkOutage(err, false)
}

// walkOutage checks err and the errors it wraps; onConn is true under a
// *net.OpError or a *url.Error, where an io.EOF means the other side closed
// the connection before it answered.
func walkOutage(err error, onConn bool) bool {
	for err != nil {
		if outageNode(err, onConn) {
			return true
		}
		switch err.(type) {
		case *net.OpError, *url.Error:
			onConn = true
		}
		switch e := err.(type) {
		case interface{ Unwrap() []error }:
			for _, m := range e.Unwrap() {
				if walkOutage(m, onConn) {
					return true
				}
			}
			return false
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		default:
			return false
		}
	}
	return false
}

// outageNode looks at err itself, not at what it wraps.
func outageNode(err error, onConn bool) bool {
	switch e := err.(type) {
	case syscall.Errno:
		return outageErrno(e)
	case *net.DNSError:
		// "no such host" is an answer, not an outage; a server that timed
		// out or failed (SERVFAIL) may answer next time.
		return !e.IsNotFound && (e.IsTimeout || e.IsTemporary)
	case interface{ Timeout() bool }:
		// net.Error and os.ErrDeadlineExceeded (i/o timeout), a dial that
		// timed out, context.DeadlineExceeded, net/http's TLS handshake
		// timeout.
		if e.Timeout() {
			return true
		}
	}
	switch {
	case err == io.ErrUnexpectedEOF:
		return true
	case err == io.EOF:
		// A bare io.EOF is the normal end of a stream, and what decoding
		// an empty body gives: a bug, if it repeats. Under a network
		// operation it is a connection closed before the answer came.
		return onConn
	}
	code, ok := grpcCode(err)
	return ok && grpcRetryable(code)
}

// outageErrnos are the system errors of a connection that could not be
// made or was lost.
var outageErrnos = [...]syscall.Errno{
	syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED,
	syscall.EPIPE, syscall.ETIMEDOUT, syscall.EHOSTUNREACH, syscall.EHOSTDOWN,
	syscall.ENETUNREACH, syscall.ENETDOWN, syscall.ENETRESET,
}

func outageErrno(e syscall.Errno) bool {
	for _, o := range outageErrnos {
		if e == o {
			return true
		}
	}
	return false
}

// The gRPC status codes an outage shows as, by their numbers, which the gRPC
// specification fixes: the codes retry/grpcretry.Retryable accepts (a test
// there keeps the two lists equal).
const (
	grpcDeadlineExceeded  = 4
	grpcResourceExhausted = 8
	grpcAborted           = 10
	grpcInternal          = 13
	grpcUnavailable       = 14
)

func grpcRetryable(code uint64) bool {
	switch code {
	case grpcDeadlineExceeded, grpcResourceExhausted, grpcAborted, grpcInternal, grpcUnavailable:
		return true
	}
	return false
}

// grpcCode reads the status code of a gRPC status error, which reaches a
// handler unmarked when it calls a gRPC service without retry/grpcretry.
// Such an error has a method GRPCStatus() *status.Status, and the status a
// method Code() codes.Code (a uint32). This package imports no gRPC, so it
// calls both by reflection; the method name is a constant, which keeps the
// linker's dead-code elimination. ok is false for any other error.
func grpcCode(err error) (code uint64, ok bool) {
	if !hasGRPCStatus(reflect.TypeOf(err)) {
		return 0, false
	}
	m := reflect.ValueOf(err).MethodByName("GRPCStatus")
	defer func() {
		if recover() != nil {
			code, ok = 0, false // a GRPCStatus that panics is no gRPC status
		}
	}()
	s := m.Call(nil)[0]
	if s.Kind() == reflect.Pointer && s.IsNil() {
		return 0, false
	}
	c := s.MethodByName("Code")
	if !c.IsValid() || c.Type().NumIn() != 0 || c.Type().NumOut() != 1 || c.Type().Out(0).Kind() != reflect.Uint32 {
		return 0, false
	}
	return c.Call(nil)[0].Uint(), true
}

// grpcTypes caches, per error type, whether it has a GRPCStatus method of
// the right shape: looking it up costs more than the rest of a decision.
var grpcTypes sync.Map // reflect.Type -> bool

func hasGRPCStatus(t reflect.Type) bool {
	if v, ok := grpcTypes.Load(t); ok {
		return v.(bool)
	}
	m, ok := t.MethodByName("GRPCStatus")
	ok = ok && m.Type.NumIn() == 1 && m.Type.NumOut() == 1 // the receiver is In(0)
	grpcTypes.Store(t, ok)
	return ok
}
