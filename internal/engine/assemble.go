package engine

import (
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel/trace"

	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/internal/tracing"
	"github.com/grit-run/grit/store"
)

// Observe is where an assembled engine reports: what its metrics count
// into (nil: nothing) and the provider of its spans (nil: none).
type Observe struct {
	Metrics        gate.Metrics
	TracerProvider trace.TracerProvider
}

// StoreWatcher is a Metrics that also reports a store's gauges, given the
// store and the groups' retry budget (metrics.Metrics is one): Assemble
// hands it the engine's.
type StoreWatcher interface {
	WatchStore(st store.Store, budget store.BudgetRates, log *slog.Logger) error
}

// Assemble builds a working engine from cfg, the one place where an
// engine is put together for grit.New, grit worker, grit run and grit
// bench: the metrics of o.Metrics (watching the store's gauges, with the
// groups' budgets read against cfg's retry budget, when they can), the
// tracer made from o.TracerProvider, then New's defaults and validation
// (alerting included). A Metrics or Tracer already in cfg is replaced
// when o gives one.
func Assemble(cfg Config, o Observe) (*Engine, error) {
	if o.Metrics != nil {
		if w, ok := o.Metrics.(StoreWatcher); ok && cfg.Store != nil {
			if err := w.WatchStore(cfg.Store, cfg.Protection.WithDefaults().RetryBudget, cfg.Logger); err != nil {
				return nil, fmt.Errorf("engine: %w", err)
			}
		}
		cfg.Metrics = o.Metrics
	}
	if o.TracerProvider != nil {
		cfg.Tracer = tracing.New(o.TracerProvider)
	}
	return New(cfg)
}

// Metrics are what the engine counts into (never nil: gate.NoMetrics when
// none), for what its client does besides claiming: the tasks it
// enqueues.
func (e *Engine) Metrics() gate.Metrics { return e.cfg.Metrics }

// Tracer is the engine's tracer (nil: none), for its client's enqueues.
func (e *Engine) Tracer() *tracing.Tracer { return e.cfg.Tracer }
