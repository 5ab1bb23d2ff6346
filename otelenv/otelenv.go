// Package otelenv makes the OpenTelemetry TracerProvider that the standard
// OTEL_* environment variables configure, with an OTLP exporter over HTTP
// or gRPC. It is opt-in: package grit takes any TracerProvider
// (grit.Config.TracerProvider) and links no exporter; the grit command
// uses this package, and a Go program that wants the same behaviour calls
// FromEnv and passes the provider on:
//
//	tp, stop, err := otelenv.FromEnv(ctx, nil)
//	if err != nil { ... }
//	defer stop(context.Background())
//	c, err := grit.Open(ctx, dsn, grit.Config{TracerProvider: tp}) // tp may be nil: no traces
package otelenv

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// FromEnv returns the TracerProvider the standard OTEL_* variables
// configure, with a function that flushes and stops it; a nil provider
// when they configure no traces: OTEL_SDK_DISABLED=true,
// OTEL_TRACES_EXPORTER=none, or neither OTEL_TRACES_EXPORTER=otlp nor an
// OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). Spans go to an OTLP exporter over
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL
// (http/protobuf, the default, or grpc), which reads the endpoint,
// headers, timeout and TLS settings from the environment itself; the SDK
// reads the sampler (OTEL_TRACES_SAMPLER) and the batching (OTEL_BSP_*);
// the service is named by OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES,
// else "grit". A nil getenv is os.Getenv.
func FromEnv(ctx context.Context, getenv func(string) string) (trace.TracerProvider, func(context.Context) error, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if on, err := configured(getenv); !on || err != nil {
		return nil, func(context.Context) error { return nil }, err
	}
	exp, err := exporter(ctx, getenv)
	if err != nil {
		return nil, nil, err
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", "grit")),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && res == nil {
		return nil, nil, fmt.Errorf("otelenv: the resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES describe: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}

// configured tells whether the environment asks for traces.
func configured(getenv func(string) string) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return false, nil
	case "otlp":
		return true, nil
	case "":
		return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "", nil
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: grit sends traces with otlp (or none); unset it or set it to otlp or none", exp)
	}
}

// exporter is the OTLP exporter of the protocol the environment names.
func exporter(ctx context.Context, getenv func(string) string) (*otlptrace.Exporter, error) {
	name, proto := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	if proto == "" {
		name, proto = "OTEL_EXPORTER_OTLP_PROTOCOL", strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	var exp *otlptrace.Exporter
	var err error
	switch proto {
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("%s=%s: grit's OTLP exporter speaks http/protobuf (the default) or grpc", name, proto)
	}
	if err != nil {
		return nil, fmt.Errorf("otelenv: the OTLP exporter: %w", err)
	}
	return exp, nil
}
