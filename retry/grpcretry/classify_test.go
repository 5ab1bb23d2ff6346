package grpcretry

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/grit-run/grit/retry"
)

func withRetryInfo(t *testing.T, code codes.Code, delay *durationpb.Duration) error {
	t.Helper()
	s, err := status.New(code, "busy").WithDetails(&errdetails.RetryInfo{RetryDelay: delay})
	if err != nil {
		t.Fatal(err)
	}
	return s.Err()
}

func TestClassify(t *testing.T) {
	t.Parallel()
	plain := errors.New("disk full")
	tests := []struct {
		name      string
		err       error
		wantNil   bool
		wantClass retry.Class
		wantDelay time.Duration
		wantCode  codes.Code
	}{
		{name: "nil", err: nil, wantNil: true},
		{name: "ok", err: status.New(codes.OK, "").Err(), wantNil: true},
		{name: "unavailable", err: status.Error(codes.Unavailable, "down"), wantClass: retry.ClassTransient, wantCode: codes.Unavailable},
		{name: "deadline", err: status.Error(codes.DeadlineExceeded, "slow"), wantClass: retry.ClassTransient, wantCode: codes.DeadlineExceeded},
		{name: "internal", err: status.Error(codes.Internal, "oops"), wantClass: retry.ClassTransient, wantCode: codes.Internal},
		{name: "resource exhausted", err: status.Error(codes.ResourceExhausted, "quota"), wantClass: retry.ClassTransient, wantCode: codes.ResourceExhausted},
		{name: "aborted", err: status.Error(codes.Aborted, "conflict"), wantClass: retry.ClassTransient, wantCode: codes.Aborted},
		{name: "invalid argument", err: status.Error(codes.InvalidArgument, "bad"), wantClass: retry.ClassPermanent, wantCode: codes.InvalidArgument},
		{name: "not found", err: status.Error(codes.NotFound, "gone"), wantClass: retry.ClassPermanent, wantCode: codes.NotFound},
		{name: "unauthenticated", err: status.Error(codes.Unauthenticated, "who"), wantClass: retry.ClassPermanent, wantCode: codes.Unauthenticated},
		{name: "data loss", err: status.Error(codes.DataLoss, "lost"), wantClass: retry.ClassPermanent, wantCode: codes.DataLoss},
		{name: "canceled", err: status.Error(codes.Canceled, "stop"), wantClass: retry.ClassCanceled, wantCode: codes.Canceled},
		{name: "unknown", err: status.Error(codes.Unknown, "?"), wantClass: retry.Unclassified, wantCode: codes.Unknown},
		{name: "undefined code", err: status.Error(codes.Code(42), "?"), wantClass: retry.Unclassified, wantCode: codes.Code(42)},
		{name: "not a status", err: plain, wantClass: retry.Unclassified, wantCode: codes.Unknown},
		{name: "wrapped status", err: fmt.Errorf("send: %w", status.Error(codes.Unavailable, "down")), wantClass: retry.ClassTransient, wantCode: codes.Unavailable},
		{name: "already marked wins", err: retry.Permanent(status.Error(codes.Unavailable, "down")), wantClass: retry.ClassPermanent, wantCode: codes.Unavailable},
		{name: "retry info", err: withRetryInfo(t, codes.ResourceExhausted, durationpb.New(3*time.Second)), wantClass: retry.ClassAfter, wantDelay: 3 * time.Second, wantCode: codes.ResourceExhausted},
		{name: "retry info on unknown", err: withRetryInfo(t, codes.Unknown, durationpb.New(time.Second)), wantClass: retry.ClassAfter, wantDelay: time.Second, wantCode: codes.Unknown},
		{name: "retry info negative", err: withRetryInfo(t, codes.Unavailable, durationpb.New(-time.Second)), wantClass: retry.ClassAfter, wantDelay: 0, wantCode: codes.Unavailable},
		{name: "retry info capped", err: withRetryInfo(t, codes.Unavailable, durationpb.New(48*time.Hour)), wantClass: retry.ClassAfter, wantDelay: MaxRetryDelay, wantCode: codes.Unavailable},
		{name: "retry info without delay", err: withRetryInfo(t, codes.Unavailable, nil), wantClass: retry.ClassTransient, wantCode: codes.Unavailable},
		{name: "retry info on permanent", err: withRetryInfo(t, codes.InvalidArgument, durationpb.New(time.Second)), wantClass: retry.ClassPermanent, wantCode: codes.InvalidArgument},
		{name: "retry info on canceled", err: withRetryInfo(t, codes.Canceled, durationpb.New(time.Second)), wantClass: retry.ClassCanceled, wantCode: codes.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Classify(tt.err)
			if tt.wantNil {
				if got != nil {
					t.Fatalf("Classify(%v) = %v, want nil", tt.err, got)
				}
				return
			}
			if got == nil {
				t.Fatalf("Classify(%v) = nil", tt.err)
			}
			class, delay := retry.Classify(got)
			if class != tt.wantClass || delay != tt.wantDelay {
				t.Errorf("retry.Classify = %v, %v; want %v, %v", class, delay, tt.wantClass, tt.wantDelay)
			}
			if code := status.Code(got); code != tt.wantCode {
				t.Errorf("status.Code = %v, want %v", code, tt.wantCode)
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("the original error is not reachable with errors.Is")
			}
			if got.Error() != tt.err.Error() {
				t.Errorf("message = %q, want it unchanged: %q", got.Error(), tt.err.Error())
			}
		})
	}
}

func TestClassifyKeepsStatus(t *testing.T) {
	t.Parallel()
	orig := withRetryInfo(t, codes.Unavailable, durationpb.New(2*time.Second))
	for _, err := range []error{Classify(orig), Classify(fmt.Errorf("call: %w", orig))} {
		s, ok := status.FromError(err)
		if !ok {
			t.Fatalf("status.FromError(%v) is not ok", err)
		}
		if s.Code() != codes.Unavailable || len(s.Details()) != 1 {
			t.Errorf("status = %v with %d details, want UNAVAILABLE with its RetryInfo", s.Code(), len(s.Details()))
		}
		var marked *retry.AfterError
		if !errors.As(err, &marked) || marked.Delay != 2*time.Second {
			t.Errorf("errors.As(*retry.AfterError) = %v", marked)
		}
	}
}

func TestClassifyCanceled(t *testing.T) {
	t.Parallel()
	err := Classify(status.Error(codes.Canceled, "client went away"))
	if !errors.Is(err, context.Canceled) {
		t.Fatal("a CANCELED status does not match context.Canceled")
	}
	if errors.Is(err, retry.ErrTransient) || errors.Is(err, retry.ErrPermanent) {
		t.Error("a CANCELED status carries a retry mark")
	}
	if s, ok := status.FromError(err); !ok || s.Code() != codes.Canceled || s.Message() != "client went away" {
		t.Errorf("status.FromError = %v, %v", s, ok)
	}
	if Classify(err) != err {
		t.Error("classifying twice wrapped again")
	}
}

func TestClassifyOriginalStatusByAs(t *testing.T) {
	t.Parallel()
	orig := status.New(codes.Unavailable, "down")
	var gs interface{ GRPCStatus() *status.Status }
	if !errors.As(Classify(orig.Err()), &gs) {
		t.Fatal("errors.As finds no GRPCStatus")
	}
	if got := gs.GRPCStatus(); got.Code() != codes.Unavailable || got.Message() != "down" {
		t.Errorf("GRPCStatus = %v, %q; want UNAVAILABLE, %q", got.Code(), got.Message(), "down")
	}
}
