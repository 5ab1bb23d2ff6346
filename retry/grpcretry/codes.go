package grpcretry

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
)

// Retryable reports whether a call that failed with code is worth trying
// again: DEADLINE_EXCEEDED, UNAVAILABLE, INTERNAL, RESOURCE_EXHAUSTED and
// ABORTED. [Classify] marks these transient.
func Retryable(code codes.Code) bool {
	switch code {
	case codes.DeadlineExceeded, codes.Unavailable, codes.Internal,
		codes.ResourceExhausted, codes.Aborted:
		return true
	}
	return false
}

// Permanent reports whether a call that failed with code will fail the same
// way every time: INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS,
// PERMISSION_DENIED, UNAUTHENTICATED, FAILED_PRECONDITION, OUT_OF_RANGE,
// UNIMPLEMENTED and DATA_LOSS. [Classify] marks these permanent.
//
// A code is never both Retryable and Permanent. OK, CANCELED, UNKNOWN and
// codes gRPC does not define are neither.
func Permanent(code codes.Code) bool {
	switch code {
	case codes.InvalidArgument, codes.NotFound, codes.AlreadyExists,
		codes.PermissionDenied, codes.Unauthenticated, codes.FailedPrecondition,
		codes.OutOfRange, codes.Unimplemented, codes.DataLoss:
		return true
	}
	return false
}

// RetryableCodes returns the codes [Retryable] accepts, in numeric order. The
// slice is new on each call: changing it changes nothing here.
func RetryableCodes() []codes.Code { return codesWhere(Retryable) }

// PermanentCodes returns the codes [Permanent] accepts, in numeric order. The
// slice is new on each call: changing it changes nothing here.
func PermanentCodes() []codes.Code { return codesWhere(Permanent) }

func codesWhere(keep func(codes.Code) bool) []codes.Code {
	var out []codes.Code
	for c := range codes.Code(len(codeNames)) {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// codeNames are the names the service config (and google.rpc.Code) spells
// codes with, indexed by code. CANCELLED is spelled so [sic].
var codeNames = [...]string{
	codes.OK:                 "OK",
	codes.Canceled:           "CANCELLED",
	codes.Unknown:            "UNKNOWN",
	codes.InvalidArgument:    "INVALID_ARGUMENT",
	codes.DeadlineExceeded:   "DEADLINE_EXCEEDED",
	codes.NotFound:           "NOT_FOUND",
	codes.AlreadyExists:      "ALREADY_EXISTS",
	codes.PermissionDenied:   "PERMISSION_DENIED",
	codes.ResourceExhausted:  "RESOURCE_EXHAUSTED",
	codes.FailedPrecondition: "FAILED_PRECONDITION",
	codes.Aborted:            "ABORTED",
	codes.OutOfRange:         "OUT_OF_RANGE",
	codes.Unimplemented:      "UNIMPLEMENTED",
	codes.Internal:           "INTERNAL",
	codes.Unavailable:        "UNAVAILABLE",
	codes.DataLoss:           "DATA_LOSS",
	codes.Unauthenticated:    "UNAUTHENTICATED",
}

// codeName returns the service-config name of c, and false for a code gRPC
// does not define.
func codeName(c codes.Code) (string, bool) {
	if int(c) < len(codeNames) {
		return codeNames[c], true
	}
	return "", false
}

// ParseCode parses a status code written as in a service config or a
// GRIT_* variable: "UNAVAILABLE", "deadline_exceeded". ASCII case does not
// matter, surrounding spaces are ignored, and both CANCELLED (gRPC's
// spelling) and CANCELED are accepted. Anything else, a number or a name
// with non-ASCII letters included, is an error.
func ParseCode(s string) (codes.Code, error) {
	if name := strings.ToUpper(strings.TrimSpace(s)); isASCII(s) {
		if name == "CANCELED" {
			return codes.Canceled, nil
		}
		if i := slices.Index(codeNames[:], name); i >= 0 {
			return codes.Code(i), nil
		}
	}
	return 0, fmt.Errorf("grpcretry: %q is not a gRPC status code (use a name such as UNAVAILABLE or DEADLINE_EXCEEDED)", s)
}

// isASCII guards ParseCode against Unicode case mapping, under which
// "EXIſTS" (a long s) would read as EXISTS.
func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
