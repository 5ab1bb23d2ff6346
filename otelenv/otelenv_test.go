package otelenv

import (
	"context"
	"strings"
	"testing"
)

// TestFromEnv: traces are off unless the OTEL_* variables ask for them,
// and a configuration grit cannot follow says which variable and what it
// takes.
func TestFromEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		on   bool
		says string // in the error, if any
	}{
		{name: "nothing set"},
		{name: "an endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, on: true},
		{name: "a traces endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, on: true},
		{name: "otlp", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true},
		{name: "otlp over grpc", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, on: true},
		{name: "none wins", env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}},
		{name: "disabled", env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}},
		{name: "another exporter", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, says: "OTEL_TRACES_EXPORTER=zipkin: grit sends traces with otlp (or none)"},
		{name: "another protocol", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"},
			says: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json: grit's OTLP exporter speaks http/protobuf (the default) or grpc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tp, stop, err := FromEnv(context.Background(), func(k string) string { return tt.env[k] })
			if tt.says != "" {
				if err == nil || !strings.Contains(err.Error(), tt.says) {
					t.Fatalf("error %v, want one saying %q", err, tt.says)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (tp != nil) != tt.on {
				t.Errorf("provider %v, want one: %v", tp, tt.on)
			}
			if err := stop(context.Background()); err != nil {
				t.Errorf("stop: %v", err)
			}
		})
	}
}
