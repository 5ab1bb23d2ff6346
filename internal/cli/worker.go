package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
)

func newWorkerCmd(e *env) *cobra.Command {
	var queues []string
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "work tasks from the store until stopped (SIGTERM or Ctrl-C drains, then gives back the rest)",
		Long: `Claims and works process tasks from the store until it gets SIGTERM or
SIGINT. On a stop it claims nothing more, lets running attempts finish for
the drain time (GRIT_DRAIN), then cuts off what is left and gives those
tasks back without using an attempt. Start as many workers as you like, on
as many machines as share the store.

Every flag below has a GRIT_* variable; grit config shows what is in
effect and where each value came from. The downstream protection
(--retry-budget, --budget-wait, --pressure-base, --pressure-max,
--breaker) applies to the tasks of each group; a group's own breaker
settings (grit breakers set GROUP) replace --breaker. --outage-tasks and
--outage-window tell an outage (many tasks failing alike, none
succeeding: held) from poison (one task failing alike: dead-lettered).
--alert-webhook POSTs an alert, as JSON, when a task is dead-lettered, a
group's breaker opens or an outage is held (docs/alerts.md). --metrics
serves Prometheus metrics at /metrics (docs/observability.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.worker(cmd.Context(), cmd.Flags(), queues)
		},
	}
	registerKnobs(cmd.Flags(), append(append([]knob{}, workerKnobs...), knobMetrics, knobSchedules))
	cmd.Flags().StringSliceVar(&queues, "queue", nil, "only claim from these queues (default: all)")
	return cmd
}

func (e *env) worker(ctx context.Context, fs *pflag.FlagSet, queues []string) error {
	ws, err := e.settings(fs)
	if err != nil {
		return err
	}
	log := e.logger(slog.LevelInfo)
	sigCtx, stop := untilStopped(ctx)
	defer stop()
	st, err := e.openWhenWritable(sigCtx, log)
	if err != nil || st == nil {
		return err
	}
	defer st.Close()
	tp, stopTracing, err := e.tracerProvider(ctx)
	if err != nil {
		return err
	}
	defer stopTracing()
	m, stopMetrics, err := e.serveMetrics(ws, log)
	if err != nil {
		return err
	}
	defer stopMetrics()
	eng, err := engine.Assemble(workerConfig(st, ws, queues, log), engine.Observe{Metrics: m, TracerProvider: tp})
	if err != nil {
		return err
	}
	if err := eng.Start(ctx); err != nil {
		return err
	}
	attrs := []any{"worker", eng.WorkerID(), "store", shownDSN(e.storeDSN), "concurrency", ws.concurrency, "lease", ws.lease}
	if hook := ws.alerting.AlertWebhook; hook != "" {
		attrs = append(attrs, "alert_webhook", alert.Redact(hook))
	}
	if ws.metrics != "" {
		attrs = append(attrs, "metrics", ws.metrics)
	}
	if len(ws.schedules) > 0 {
		attrs = append(attrs, "schedules_declared", len(ws.schedules))
	}
	log.Info("worker started", attrs...)
	<-sigCtx.Done()
	log.Info("stopping: draining running attempts", "drain", ws.drain)
	drainCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ws.drain)
	defer cancel()
	if err := eng.Stop(drainCtx); err != nil {
		return fmt.Errorf("stop: %w", err)
	}
	s := eng.Stats()
	log.Info("worker stopped", "claimed", s.Claimed.Load(), "finished", s.Finished.Load(), "lease_lost", s.LeaseLost.Load())
	return nil
}

// openWhenWritable opens the store for a worker; while it is read-only (a
// standby, a database turned read-only in an incident), it says so and
// tries again, with a growing delay up to 30s, rather than exit: the
// worker starts once the store can take its work. It returns nil, nil
// when ctx ends first.
func (e *env) openWhenWritable(ctx context.Context, log *slog.Logger) (store.Store, error) {
	for n := 1; ; n++ {
		st, err := e.openStore(ctx)
		if err == nil || !errors.Is(err, store.ErrReadOnly) {
			return st, err
		}
		d := readOnlyBackoff.Delay(n, 0, retry.DefaultRand)
		log.Warn("the store is read-only: waiting for it to be writable before starting", "store", shownDSN(e.storeDSN), "retry_in", d.Round(time.Millisecond), "attempts", n, "err", err)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil
		case <-t.C:
		}
	}
}

// readOnlyBackoff spaces a worker's attempts to open a read-only store.
var readOnlyBackoff = retry.Exponential{Min: time.Second, Max: 30 * time.Second}

// workerConfig is grit worker's engine configuration over st.
func workerConfig(st store.Store, s settings, queues []string, log *slog.Logger) engine.Config {
	cfg := s.engineConfig(st)
	cfg.Queues, cfg.Logger = queues, log
	return cfg
}
