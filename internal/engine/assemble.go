package engine

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/grit-run/grit/internal/tracing"
	"github.com/grit-run/grit/metrics"
)

// Observe is where an assembled engine reports: the registry of its
// metrics (nil: none) and the provider of its spans (nil: none).
type Observe struct {
	Metrics        prometheus.Registerer
	TracerProvider trace.TracerProvider
}

// Assemble builds a working engine from cfg, the one place where an
// engine is put together for grit.New, grit worker, grit run and grit
// bench: the metrics registered on o.Metrics with the store's gauges
// (the groups' budgets read against cfg's retry budget), the tracer made
// from o.TracerProvider, then New's defaults and validation (alerting
// included). A Metrics or Tracer already in cfg is replaced when o gives
// one.
func Assemble(cfg Config, o Observe) (*Engine, error) {
	if o.Metrics != nil {
		m, err := metrics.Register(o.Metrics, metrics.StoreConfig{
			Store: cfg.Store, Budget: cfg.Protection.WithDefaults().RetryBudget, Logger: cfg.Logger})
		if err != nil {
			return nil, fmt.Errorf("engine: %w", err)
		}
		cfg.Metrics = m
	}
	if o.TracerProvider != nil {
		cfg.Tracer = tracing.New(o.TracerProvider)
	}
	return New(cfg)
}

// Metrics are the metrics the engine counts into (nil: none), for what
// its client does besides claiming: the tasks it enqueues.
func (e *Engine) Metrics() *metrics.Metrics { return e.cfg.Metrics }

// Tracer is the engine's tracer (nil: none), for its client's enqueues.
func (e *Engine) Tracer() *tracing.Tracer { return e.cfg.Tracer }
