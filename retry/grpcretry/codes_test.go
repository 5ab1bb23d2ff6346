package grpcretry

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
)

func TestCodeTables(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code                 codes.Code
		retryable, permanent bool
	}{
		{codes.OK, false, false},
		{codes.Canceled, false, false},
		{codes.Unknown, false, false},
		{codes.InvalidArgument, false, true},
		{codes.DeadlineExceeded, true, false},
		{codes.NotFound, false, true},
		{codes.AlreadyExists, false, true},
		{codes.PermissionDenied, false, true},
		{codes.ResourceExhausted, true, false},
		{codes.FailedPrecondition, false, true},
		{codes.Aborted, true, false},
		{codes.OutOfRange, false, true},
		{codes.Unimplemented, false, true},
		{codes.Internal, true, false},
		{codes.Unavailable, true, false},
		{codes.DataLoss, false, true},
		{codes.Unauthenticated, false, true},
		{codes.Code(17), false, false},
		{codes.Code(1 << 31), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.code.String(), func(t *testing.T) {
			t.Parallel()
			if got := Retryable(tt.code); got != tt.retryable {
				t.Errorf("Retryable(%v) = %v, want %v", tt.code, got, tt.retryable)
			}
			if got := Permanent(tt.code); got != tt.permanent {
				t.Errorf("Permanent(%v) = %v, want %v", tt.code, got, tt.permanent)
			}
			if got := slices.Contains(RetryableCodes(), tt.code); got != tt.retryable {
				t.Errorf("RetryableCodes() contains %v = %v, want %v", tt.code, got, tt.retryable)
			}
			if got := slices.Contains(PermanentCodes(), tt.code); got != tt.permanent {
				t.Errorf("PermanentCodes() contains %v = %v, want %v", tt.code, got, tt.permanent)
			}
		})
	}
}

func TestCodeListsAreCopies(t *testing.T) {
	t.Parallel()
	RetryableCodes()[0] = codes.OK
	PermanentCodes()[0] = codes.OK
	if RetryableCodes()[0] == codes.OK || PermanentCodes()[0] == codes.OK {
		t.Fatal("changing a returned list changed the next one")
	}
}

func TestParseCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    codes.Code
		wantErr bool
	}{
		{"UNAVAILABLE", codes.Unavailable, false},
		{"unavailable", codes.Unavailable, false},
		{"  Deadline_Exceeded\t", codes.DeadlineExceeded, false},
		{"CANCELLED", codes.Canceled, false},
		{"CANCELED", codes.Canceled, false},
		{"OK", codes.OK, false},
		{"UNAUTHENTICATED", codes.Unauthenticated, false},
		{"", 0, true},
		{"14", 0, true},
		{"Unavailable ", codes.Unavailable, false},
		{"DeadlineExceeded", 0, true},
		{"UNAVAILABLE,INTERNAL", 0, true},
		{"UN AVAILABLE", 0, true},
		{"ALREADY_EXIſTS", 0, true},    // a long s, which upper-cases to S
		{"\u00a0UNAVAILABLE", 0, true}, // a no-break space
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseCode(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseCode(%q) = %v, want an error", tt.in, got)
				}
				if !strings.HasPrefix(err.Error(), "grpcretry: ") {
					t.Errorf("error %q lacks the package prefix", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseCode(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseCodeRoundTrip(t *testing.T) {
	t.Parallel()
	for c := range codes.Code(17) {
		name, ok := codeName(c)
		if !ok {
			t.Fatalf("codeName(%v) not found", c)
		}
		got, err := ParseCode(name)
		if err != nil || got != c {
			t.Errorf("ParseCode(%q) = %v, %v; want %v", name, got, err, c)
		}
	}
}
