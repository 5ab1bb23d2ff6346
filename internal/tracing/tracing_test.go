package tracing

import (
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/grit-run/grit/task"
)

// TestTraceparentRoundTrip: what Format writes, Parse reads; anything
// else reads as no span.
func TestTraceparentRoundTrip(t *testing.T) {
	t.Parallel()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	sc := Parse(tp)
	if !sc.IsValid() || !sc.IsRemote() || sc.SpanID().String() != "00f067aa0ba902b7" || !sc.IsSampled() {
		t.Fatalf("Parse(%q) = %+v", tp, sc)
	}
	if got := Format(sc); got != tp {
		t.Errorf("Format = %q, want %q", got, tp)
	}
	for _, bad := range []string{"", "garbage", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"} {
		if Parse(bad).IsValid() {
			t.Errorf("Parse(%q) is valid", bad)
		}
	}
	if Format(trace.SpanContext{}) != "" {
		t.Error("an invalid span context formats")
	}
	var none *Tracer
	none.Enqueue(t.Context(), nil)(nil, nil)
	End(nil, nil)
}

// TestSubmitTracesTheWholeRun: a run's tasks all carry its span's
// context, so the attempts of the run are one trace.
func TestSubmitTracesTheWholeRun(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	x := New(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))
	r := task.NewRun{Name: "nightly", Tasks: []task.NewTask{{Name: "a", Kind: "exec"}, {Name: "b", Kind: "exec", Needs: []string{"a"}}}}
	x.Submit(t.Context(), &r)(task.Run{ID: 7}, nil)
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "send run nightly" || spans[0].SpanKind != trace.SpanKindProducer {
		t.Fatalf("spans %+v, want the run's send", spans)
	}
	want := Format(spans[0].SpanContext)
	for _, tk := range r.Tasks {
		if tk.Trace != want {
			t.Errorf("task %s has trace %q, want the run's %q", tk.Name, tk.Trace, want)
		}
	}
}
