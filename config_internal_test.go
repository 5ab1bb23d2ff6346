package grit

import (
	"log/slog"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/grit-run/grit/fsm"
	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/metrics"
	"github.com/grit-run/grit/retention"
	"github.com/grit-run/grit/schedule"
)

// TestEveryConfigFieldReachesTheEngine: New copies Config into the
// engine's configuration field by field, and a field it forgot would be
// a setting that does nothing. Every field of Config has a case here,
// given a value other than its default and found in the engine's
// effective configuration; a new field without a case fails the test.
func TestEveryConfigFieldReachesTheEngine(t *testing.T) {
	t.Parallel()
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { tp.Shutdown(t.Context()) })
	logger := slog.New(slog.DiscardHandler)
	cfg := Config{
		Queues: []string{"mail"}, AllowExec: []string{"/usr/bin/convert"}, Concurrency: 7, Lease: 9 * time.Second, Heartbeat: 2 * time.Second,
		WorkerID: "w-config", Logger: logger,
		Protection:     Protection{PressureBase: 3 * time.Second, BudgetWait: 4 * time.Second},
		Alerting:       Alerting{AlertWebhook: "http://127.0.0.1:9/alerts"},
		Metrics:        mustMetrics(t),
		TracerProvider: tp,
		Retention:      retention.Policy{Workers: 5 * time.Hour},
		Schedules:      []schedule.Schedule{{Name: "nightly", Cron: "@daily", Task: schedule.Task{Kind: "report"}}},
		Machines: []fsm.Machine{{Name: "door", Initial: "shut", States: []fsm.State{{Name: "shut"}, {Name: "open"}},
			Transitions: []fsm.Transition{{From: "shut", Event: "push", To: "open"}}}},
		AutoTimeouts: AutoTimeouts{Factor: 3},
		StuckGrace:   11 * time.Second,
		Isolation:    Isolation{MaxAttempts: 12},
	}
	cases := map[string]func(engine.Config) bool{
		"Queues":         func(e engine.Config) bool { return reflect.DeepEqual(e.Queues, cfg.Queues) },
		"AllowExec":      func(e engine.Config) bool { return reflect.DeepEqual(e.AllowExec, cfg.AllowExec) },
		"Concurrency":    func(e engine.Config) bool { return e.Concurrency == 7 },
		"Lease":          func(e engine.Config) bool { return e.Lease == 9*time.Second },
		"Heartbeat":      func(e engine.Config) bool { return e.Heartbeat == 2*time.Second },
		"WorkerID":       func(e engine.Config) bool { return e.WorkerID == "w-config" },
		"Logger":         func(e engine.Config) bool { return e.Logger == logger },
		"Protection":     func(e engine.Config) bool { return e.PressureBase == 3*time.Second && e.BudgetWait == 4*time.Second },
		"Alerting":       func(e engine.Config) bool { return e.AlertWebhook == cfg.AlertWebhook },
		"Metrics":        func(e engine.Config) bool { return any(e.Metrics) == any(cfg.Metrics) },
		"TracerProvider": func(e engine.Config) bool { return e.Tracer != nil },
		"Retention":      func(e engine.Config) bool { return e.Retention.Workers == 5*time.Hour },
		"Schedules":      func(e engine.Config) bool { return len(e.Schedules) == 1 && e.Schedules[0].Name == "nightly" },
		"Machines":       func(e engine.Config) bool { return len(e.Machines) == 1 && e.Machines[0].Name == "door" },
		"AutoTimeouts":   func(e engine.Config) bool { return e.AutoTimeouts.Factor == 3 },
		"StuckGrace":     func(e engine.Config) bool { return e.StuckGrace == 11*time.Second },
		"Isolation":      func(e engine.Config) bool { return e.Isolation.MaxAttempts == 12 },
	}
	ct := reflect.TypeOf(Config{})
	for i := range ct.NumField() {
		if _, ok := cases[ct.Field(i).Name]; !ok {
			t.Errorf("Config.%s has no case here: say where it reaches the engine", ct.Field(i).Name)
		}
	}
	c, err := Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "grit.db"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := c.engine.Settings()
	for name, reached := range cases {
		if !reached(got) {
			t.Errorf("Config.%s did not reach the engine", name)
		}
	}
}

// mustMetrics is grit's Prometheus metrics on a registry of their own.
func mustMetrics(t *testing.T) *metrics.Metrics {
	t.Helper()
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return m
}
