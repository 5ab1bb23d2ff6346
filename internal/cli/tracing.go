package cli

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/grit-run/grit/otelenv"
)

// tracerProvider is the OpenTelemetry provider the standard OTEL_*
// variables configure, for the commands that enqueue or work tasks (grit
// worker, grit run, grit submit, grit server); nil when they configure no
// traces. A
// configuration grit cannot follow is a usage error. stop sends the spans
// still buffered, for at most five seconds.
func (e *env) tracerProvider(ctx context.Context) (tp trace.TracerProvider, stop func(), err error) {
	p, shutdown, err := otelenv.FromEnv(ctx, e.getenv)
	if err != nil {
		return nil, nil, usageErr("%v", err)
	}
	stop = func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		shutdown(ctx)
	}
	return p, stop, nil
}
