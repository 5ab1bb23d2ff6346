package tracing

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// dropSpans is an exporter that drops what it is given: the benchmark
// times grit's part and the SDK's, not a collector's.
type dropSpans struct{}

func (dropSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (dropSpans) Shutdown(context.Context) error                             { return nil }

// BenchmarkAttemptSpan is what tracing adds to an attempt: its span
// started (linked to its enqueue's), ended with its outcome, and its
// context formatted for the next attempt, every span sampled and batched.
func BenchmarkAttemptSpan(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(dropSpans{}))
	defer tp.Shutdown(context.Background())
	x := New(tp)
	t := &task.Task{ID: 42, Queue: "default", Kind: "k", Attempt: 1, Trace: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	b.ReportAllocs()
	for b.Loop() {
		_, s := x.Attempt(context.Background(), t)
		f := store.Finish{State: task.Success}
		f.Attempt.Outcome = task.OutcomeSuccess
		End(s, &f)
	}
}

// FuzzParse: Parse reads whatever the W3C propagator reads, the same way,
// and what Format writes comes back as it was.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00",
		"00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01",
		"01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
		"00-00000000000000000000000000000000-b7ad6b7169203331-01",
		"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
		"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"", "00-", "garbage",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": s})
		want := trace.SpanContextFromContext(ctx)
		got := Parse(s)
		if !got.Equal(want) {
			t.Fatalf("Parse(%q) = %v, the propagator reads %v", s, got, want)
		}
		if got.IsValid() {
			if back := Parse(Format(got)); !back.Equal(got) {
				t.Fatalf("Parse(Format(%v)) = %v", got, back)
			}
		}
	})
}
