package cli

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/metrics"
	"github.com/grit-run/grit/store"
)

// serveMetrics serves grit worker's Prometheus metrics at /metrics on
// --metrics, when it is set, from a registry of their own: it returns the
// metrics the worker's engine is assembled with (engine.Assemble has them
// watch the store's gauges too); nil when it is not set. The address is taken before
// the engine starts, so that one in use is a usage error rather than a
// worker running unobserved. The function it returns stops serving.
func (e *env) serveMetrics(s settings, log *slog.Logger) (gate.Metrics, func(), error) {
	if s.metrics == "" {
		return nil, func() {}, nil
	}
	lis, err := net.Listen("tcp", s.metrics)
	if err != nil {
		return nil, nil, usageErr("--metrics %s: %v (give HOST:PORT or :PORT, free on this machine)", s.metrics, err)
	}
	reg := metrics.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		lis.Close()
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics.Handler(reg))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Info("serving metrics", "url", "http://"+lis.Addr().String()+"/metrics")
	go func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics: serving stopped", "addr", s.metrics, "err", err)
		}
	}()
	return m, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}, nil
}

// storeMetrics registers grit's metrics and st's gauges on a registry of
// their own, with the Go runtime's and the process's, and returns them
// with their handler: grit worker serves it on --metrics, grit server and
// grit dashboard at /metrics beside the dashboard.
func storeMetrics(st store.Store, s settings, log *slog.Logger) (*metrics.Metrics, http.Handler, error) {
	reg := metrics.NewRegistry()
	m, err := metrics.Register(reg, metrics.StoreConfig{Store: st, Budget: s.protection.RetryBudget, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	return m, metrics.Handler(reg), nil
}
