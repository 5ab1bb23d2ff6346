package tracing

import (
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// TestTraceparentRoundTrip: what Format writes, Parse reads; anything
// else reads as no span.
func TestTraceparentRoundTrip(t *testing.T) {
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
