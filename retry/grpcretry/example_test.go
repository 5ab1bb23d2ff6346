package grpcretry_test

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/retry/grpcretry"
)

func ExampleClassify() {
	for _, err := range []error{
		status.Error(codes.Unavailable, "connection refused"),
		status.Error(codes.NotFound, "no such task"),
		status.Error(codes.Canceled, "client went away"),
		status.Error(codes.Unknown, "panic in handler"),
	} {
		class, _ := retry.Classify(grpcretry.Classify(err))
		fmt.Printf("%v: %v\n", status.Code(err), class)
	}
	// Output:
	// Unavailable: transient
	// NotFound: permanent
	// Canceled: canceled
	// Unknown: unclassified
}

func ExampleClassify_retryInfo() {
	s, _ := status.New(codes.ResourceExhausted, "quota exceeded").
		WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(30 * time.Second)})

	err := grpcretry.Classify(s.Err())
	class, delay := retry.Classify(err)
	fmt.Println(class, delay)
	fmt.Println(errors.Is(err, retry.ErrAfter), status.Code(err))
	// Output:
	// after 30s
	// true ResourceExhausted
}

func ExampleRetryable() {
	fmt.Println(grpcretry.Retryable(codes.DeadlineExceeded), grpcretry.Permanent(codes.DeadlineExceeded))
	fmt.Println(grpcretry.Retryable(codes.InvalidArgument), grpcretry.Permanent(codes.InvalidArgument))
	fmt.Println(grpcretry.RetryableCodes())
	// Output:
	// true false
	// false true
	// [DeadlineExceeded ResourceExhausted Aborted Internal Unavailable]
}

func ExampleParseCode() {
	c, err := grpcretry.ParseCode(" unavailable ")
	fmt.Println(c, err)
	_, err = grpcretry.ParseCode("UNAVAILBLE")
	fmt.Println(err)
	// Output:
	// Unavailable <nil>
	// grpcretry: "UNAVAILBLE" is not a gRPC status code (use a name such as UNAVAILABLE or DEADLINE_EXCEEDED)
}

func ExampleDefault() {
	js, err := grpcretry.Default().JSON()
	if err != nil {
		panic(err)
	}
	// Pass js to grpc.NewClient with grpc.WithDefaultServiceConfig(js).
	fmt.Println(js)
	// Output:
	// {"methodConfig":[{"name":[{}],"retryPolicy":{"maxAttempts":5,"initialBackoff":"0.1s","maxBackoff":"10s","backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE","RESOURCE_EXHAUSTED","DEADLINE_EXCEEDED"]}}],"retryThrottling":{"maxTokens":10,"tokenRatio":0.1}}
}

func ExampleServiceConfig_JSON() {
	cfg := grpcretry.ServiceConfig{
		Services:       []string{"grit.v1.TasksService"},
		MaxAttempts:    3,
		InitialBackoff: 250 * time.Millisecond,
		MaxBackoff:     2 * time.Second,
		Multiplier:     1.5,
		Codes:          []codes.Code{codes.Unavailable},
	}
	js, err := cfg.JSON()
	fmt.Println(js, err)

	cfg.MaxAttempts = 10
	_, err = cfg.JSON()
	fmt.Println(err)
	// Output:
	// {"methodConfig":[{"name":[{"service":"grit.v1.TasksService"}],"retryPolicy":{"maxAttempts":3,"initialBackoff":"0.25s","maxBackoff":"2s","backoffMultiplier":1.5,"retryableStatusCodes":["UNAVAILABLE"]}}]} <nil>
	// grpcretry: MaxAttempts 10 is out of range: gRPC allows 2 to 5 (it silently uses 5 for more)
}
