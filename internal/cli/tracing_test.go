package cli

import (
	"strings"
	"testing"
)

// TestBadTracingConfigIsAUsageError: a worker told by OTEL_* to export
// traces in a way grit cannot says so and does not start.
func TestBadTracingConfigIsAUsageError(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	code, _, errOut := grit(t, "worker", "--store", migratedStore(t))
	if code != exitUsage || !strings.Contains(errOut, "OTEL_TRACES_EXPORTER=zipkin: grit sends traces with otlp (or none)") {
		t.Errorf("exit %d, %q; want a usage error naming the variable", code, errOut)
	}
}
