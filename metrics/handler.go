package metrics

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/grit-run/grit/store"
)

// Handler serves the metrics g gathers in Prometheus's text format (or
// OpenMetrics, when the scraper asks for it): mount it at /metrics. An
// error gathering one metric is reported in the answer, with the others
// still served, so that one bad collector does not blind the rest.
func Handler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, EnableOpenMetrics: true})
}

// NewRegistry returns a registry with the Go runtime's and the process's
// collectors, for a process that serves only grit's metrics (grit worker
// --metrics, grit server, grit dashboard).
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Register registers with reg grit's metrics (New) and the collector of
// cfg.Store's gauges (WatchStore): all a process needs for Handler to
// serve every grit metric.
func Register(reg prometheus.Registerer, cfg StoreConfig) (*Metrics, error) {
	m, err := New(reg)
	if err != nil {
		return nil, err
	}
	if cfg.Store == nil {
		return m, nil
	}
	return m, m.watch(cfg)
}

// WatchStore registers, on the registry m counts into, the collector of
// st's gauges (NewStoreCollector), the groups' retry budgets read
// against budget (zero: store.DefaultBudget). grit.New and grit worker
// call it with their store and budget when their metrics are a
// *Metrics, so that a user who passes metrics.New's to grit.Config gets
// the store's gauges too. Watching a store again on the same registry
// keeps the first collector.
func (m *Metrics) WatchStore(st store.Store, budget store.BudgetRates, log *slog.Logger) error {
	if m == nil {
		return nil
	}
	return m.watch(StoreConfig{Store: st, Budget: budget, Logger: log})
}

func (m *Metrics) watch(cfg StoreConfig) error {
	err := m.reg.Register(NewStoreCollector(cfg))
	if are := (prometheus.AlreadyRegisteredError{}); err != nil && !errors.As(err, &are) {
		return fmt.Errorf("metrics: register the store's collector: %w", err)
	}
	return nil
}
