package grpcretry

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/grit-run/grit/retry"
)

func FuzzParseCode(f *testing.F) {
	for _, s := range []string{"UNAVAILABLE", "cancelled", "CANCELED", " ok ", "", "14", "Unavailable\x00", "ſ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCode(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "grpcretry: ") {
				t.Fatalf("error %q lacks the package prefix", err)
			}
			return
		}
		name, ok := codeName(c)
		if !ok {
			t.Fatalf("ParseCode(%q) = %d, not a defined code", s, c)
		}
		if got := strings.ToUpper(strings.TrimSpace(s)); !isASCII(s) || got != name && !(c == codes.Canceled && got == "CANCELED") {
			t.Fatalf("ParseCode(%q) = %v, whose name is %q", s, c, name)
		}
	})
}

// FuzzServiceConfigJSON checks that whatever JSON accepts, gRPC accepts too,
// with the same values.
func FuzzServiceConfigJSON(f *testing.F) {
	f.Add(5, int64(100*time.Millisecond), int64(10*time.Second), 2.0, uint32(1<<14|1<<8|1<<4), "", true, 10.0, 0.1)
	f.Add(2, int64(1), int64(1), 0.5, uint32(1<<1), "grit.v1.TasksService", false, 0.0, 0.0)
	f.Add(6, int64(-1), int64(0), math.NaN(), uint32(1), "a/b", true, 1001.0, 0.0001)
	f.Fuzz(func(t *testing.T, attempts int, initial, maxb int64, mult float64, codeBits uint32, service string, throttle bool, tokens, ratio float64) {
		cfg := ServiceConfig{
			MaxAttempts:    attempts,
			InitialBackoff: time.Duration(initial),
			MaxBackoff:     time.Duration(maxb),
			Multiplier:     mult,
		}
		if service != "" {
			cfg.Services = []string{service}
		}
		for c := range codes.Code(18) {
			if codeBits&(1<<c) != 0 {
				cfg.Codes = append(cfg.Codes, c)
			}
		}
		if throttle {
			cfg.Throttle = &Throttle{MaxTokens: tokens, TokenRatio: ratio}
		}
		js, err := cfg.JSON()
		if err != nil {
			return
		}
		if err := acceptedByGRPC(js); err != nil {
			t.Fatalf("grpc rejects %s: %v", js, err)
		}
		var doc document
		if err := json.Unmarshal([]byte(js), &doc); err != nil {
			t.Fatal(err)
		}
		p := doc.MethodConfig[0].RetryPolicy
		if p.MaxAttempts != attempts || p.BackoffMultiplier != mult || len(p.RetryableStatusCodes) != len(cfg.Codes) {
			t.Fatalf("%s does not say what %+v says", js, cfg)
		}
		if d, err := time.ParseDuration(p.InitialBackoff); err != nil || d != cfg.InitialBackoff {
			t.Fatalf("initialBackoff %q reads back as %v, %v; want %v", p.InitialBackoff, d, err, cfg.InitialBackoff)
		}
		if d, err := time.ParseDuration(p.MaxBackoff); err != nil || d != cfg.MaxBackoff {
			t.Fatalf("maxBackoff %q reads back as %v, %v; want %v", p.MaxBackoff, d, err, cfg.MaxBackoff)
		}
	})
}

func FuzzClassify(f *testing.F) {
	f.Add(uint32(codes.Unavailable), "down", false, int64(0))
	f.Add(uint32(codes.ResourceExhausted), "quota", true, int64(time.Minute))
	f.Add(uint32(codes.Canceled), "", true, int64(-1))
	f.Add(uint32(99), "\xff", true, int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, code uint32, msg string, withInfo bool, delay int64) {
		s := status.New(codes.Code(code), msg)
		if withInfo && code != uint32(codes.OK) {
			var err error
			if s, err = s.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Duration(delay))}); err != nil {
				t.Fatal(err)
			}
		}
		in := s.Err()
		out := Classify(in)
		if in == nil {
			if out != nil {
				t.Fatalf("Classify(nil) = %v", out)
			}
			return
		}
		if status.Code(out) != codes.Code(code) || !errors.Is(out, in) || out.Error() != in.Error() {
			t.Fatalf("Classify(%v) = %v lost the original", in, out)
		}
		class, d := retry.Classify(out)
		c := codes.Code(code)
		var want retry.Class
		switch {
		case c == codes.Canceled:
			want = retry.ClassCanceled
		case Permanent(c):
			want = retry.ClassPermanent
		case withInfo:
			want = retry.ClassAfter
		case Retryable(c):
			want = retry.ClassTransient
		}
		if class != want {
			t.Fatalf("code %v, RetryInfo %v: class %v, want %v", c, withInfo, class, want)
		}
		if d < 0 || d > MaxRetryDelay {
			t.Fatalf("delay %v outside [0, %v]", d, MaxRetryDelay)
		}
		if Classify(out) != out {
			t.Fatalf("classifying twice changed %v", out)
		}
	})
}
