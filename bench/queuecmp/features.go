package main

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/fsm"
	"github.com/grit-run/grit/metrics"
	"github.com/grit-run/grit/schedule"
)

// gritFeaturesSystem is grit with every feature a worker can have on at
// once switched on, to show what they cost the success path beside
// plain grit in the same run: Prometheus metrics (a registry of its own,
// never scraped), an OpenTelemetry span for every enqueue and attempt
// (every one sampled, batched, and handed to an exporter that drops it,
// so the cost is grit's and the SDK's, not a collector's), a schedule
// (hourly, so it ticks but never fires during a workload), a state
// machine (declared, so its loop runs), and the queuecmp handler's
// timeout learned (grit.AutoTimeout, whose p99 is read from the store
// once a minute). Retention and the outage detector are on in plain
// grit too: they are defaults. Durable steps are not here: a handler
// pays for a step only when it calls grit.Step.
func gritFeaturesSystem() system {
	return system{
		name:   "grit-features",
		store:  onPostgres,
		grit:   true,
		versus: []string{"grit"},
		config: "grit Concurrency 1000 with metrics, traces (all sampled, dropped by the exporter), a schedule, a state machine and a learned timeout",
		open: func(ctx context.Context, e *env, schema string, h handlerFunc) (queue, error) {
			tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(dropSpans{}))
			m, err := metrics.New(prometheus.NewRegistry())
			if err != nil {
				return nil, err
			}
			cfg := grit.Config{
				Concurrency:    1000,
				Logger:         e.logger,
				Metrics:        m,
				TracerProvider: tp,
				Schedules: []schedule.Schedule{{
					Name: "queuecmp-hourly", Cron: "@hourly",
					Task: schedule.Task{Kind: jobKind + "-scheduled"},
				}},
				Machines: []fsm.Machine{{
					Name: "queuecmp", Initial: "idle",
					States:      []fsm.State{{Name: "idle"}, {Name: "busy", Kind: jobKind + "-fsm"}},
					Transitions: []fsm.Transition{{From: "idle", Event: "go", To: "busy"}},
				}},
			}
			dsn, err := withSchema(e.dsn, schema)
			if err != nil {
				return nil, err
			}
			q, err := openGritWith(ctx, e, dsn, cfg, grit.HandlerConfig{Policy: gritPolicy, Timeout: grit.AutoTimeout}, h)
			if err != nil {
				tp.Shutdown(context.Background())
				return nil, err
			}
			tasks := pgx.Identifier{schema, "tasks"}.Sanitize()
			q.count = func(ctx context.Context) (n int, err error) {
				err = e.schemas.pool.QueryRow(ctx, countSucceeded(tasks)).Scan(&n)
				return n, err
			}
			q.release = func() error {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				return tp.Shutdown(ctx)
			}
			return q, nil
		},
	}
}

// dropSpans is an exporter that drops what it is given.
type dropSpans struct{}

func (dropSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (dropSpans) Shutdown(context.Context) error                             { return nil }
