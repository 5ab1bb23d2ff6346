package metrics

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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
// cfg.Store's gauges (NewStoreCollector): all a process needs for
// Handler to serve every grit metric. Registering the store's collector
// again on the same registry keeps the first.
func Register(reg prometheus.Registerer, cfg StoreConfig) (*Metrics, error) {
	m, err := New(reg)
	if err != nil {
		return nil, err
	}
	if cfg.Store == nil {
		return m, nil
	}
	err = reg.Register(NewStoreCollector(cfg))
	if are := (prometheus.AlreadyRegisteredError{}); err != nil && !errors.As(err, &are) {
		return nil, fmt.Errorf("metrics: register the store's collector: %w", err)
	}
	return m, nil
}
