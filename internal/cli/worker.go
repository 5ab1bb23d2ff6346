package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/grit-run/grit/internal/engine"
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
settings (grit breakers set GROUP) replace --breaker.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.worker(cmd.Context(), cmd.Flags(), queues)
		},
	}
	registerKnobs(cmd.Flags(), workerKnobs)
	cmd.Flags().StringSliceVar(&queues, "queue", nil, "only claim from these queues (default: all)")
	return cmd
}

func (e *env) worker(ctx context.Context, fs *pflag.FlagSet, queues []string) error {
	ws, err := e.settings(fs)
	if err != nil {
		return err
	}
	st, err := e.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	eng, err := workerEngine(st, ws, queues, log)
	if err != nil {
		return err
	}
	sigCtx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := eng.Start(ctx); err != nil {
		return err
	}
	log.Info("worker started", "worker", eng.WorkerID(), "store", shownDSN(e.storeDSN), "concurrency", ws.concurrency, "lease", ws.lease)
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

// workerEngine returns grit worker's engine over st.
func workerEngine(st store.Store, s settings, queues []string, log *slog.Logger) (*engine.Engine, error) {
	cfg := s.engineConfig(st)
	cfg.Queues, cfg.Logger = queues, log
	return engine.New(cfg)
}
