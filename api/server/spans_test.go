package server_test

import (
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/internal/tracing"
)

// TestRemoteAttemptsHaveSpans: a remote worker's attempts each get a
// consumer span, from the claim to the report, a child of the task's
// enqueue span, the second linked to the first; the claim gives the
// worker its attempt's traceparent.
func TestRemoteAttemptsHaveSpans(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	h := start(t, server.Config{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))}, "")
	tk := h.enqueue(t, &pb.NewTask{Kind: "charge", Policy: "3 1ms"})
	c := h.claimOne(t, "w", "charge")
	first := tracing.Parse(c.GetTraceparent())
	if !first.IsValid() {
		t.Fatalf("the claimed task carries no traceparent: %q", c.GetTraceparent())
	}
	if _, err := h.workers.Fail(ctx(t), &pb.FailRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: c.GetLeaseToken(), ErrorClass: pb.ErrorClass_ERROR_CLASS_TRANSIENT, Message: "503"}); err != nil {
		t.Fatal(err)
	}
	c2 := h.claimOne(t, "w", "charge") // due 1ms after the failure: the claim waits for it
	if _, err := h.workers.Complete(ctx(t), &pb.CompleteRequest{TaskId: c2.GetId(), WorkerId: c2.GetLeaseOwner(), LeaseToken: c2.GetLeaseToken()}); err != nil {
		t.Fatal(err)
	}
	var enqueue sdktrace.ReadOnlySpan
	var attempts []sdktrace.ReadOnlySpan
	for _, s := range exp.GetSpans().Snapshots() {
		switch s.SpanKind() {
		case trace.SpanKindProducer:
			enqueue = s
		case trace.SpanKindConsumer:
			attempts = append(attempts, s)
		}
	}
	if enqueue == nil || len(attempts) != 2 {
		t.Fatalf("spans: enqueue %v, %d attempts; want one enqueue and two attempts", enqueue != nil, len(attempts))
	}
	if attempts[0].SpanContext().SpanID() != first.SpanID() {
		t.Errorf("the first attempt's span is not the one its traceparent named")
	}
	for i, a := range attempts {
		if a.Parent().SpanID() != enqueue.SpanContext().SpanID() || a.SpanContext().TraceID() != enqueue.SpanContext().TraceID() {
			t.Errorf("attempt %d's span is not a child of task %d's enqueue span", i+1, tk.GetId())
		}
	}
	linked := false
	for _, l := range attempts[1].Links() {
		linked = linked || l.SpanContext.SpanID() == attempts[0].SpanContext().SpanID()
	}
	if !linked {
		t.Errorf("the second attempt's span is not linked to the first's")
	}
	if attempts[0].Status().Code.String() != "Error" || attempts[1].Status().Code.String() == "Error" {
		t.Errorf("statuses %v and %v: want the failed attempt's an error, the success's not", attempts[0].Status(), attempts[1].Status())
	}
}
