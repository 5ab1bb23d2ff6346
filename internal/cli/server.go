package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/api/server"
)

// The server's knobs.
var (
	knobListen     = knob{"listen", "GRIT_LISTEN", "127.0.0.1:7420", "the address to serve the gRPC API on"}
	knobTokensFile = knob{"tokens-file", "GRIT_TOKENS_FILE", "", "a file of bearer tokens, one per line (GRIT_TOKENS adds comma-separated ones); without any, only a loopback address is served"}
	knobTLSCert    = knob{"tls-cert", "GRIT_TLS_CERT", "", "a PEM certificate (with its chain): serve TLS"}
	knobTLSKey     = knob{"tls-key", "GRIT_TLS_KEY", "", "the certificate's PEM key"}
	knobMaxPayload = knob{"max-payload", "GRIT_MAX_PAYLOAD", "1048576", "the largest args, payload or output, in bytes"}
	knobMaxBatch   = knob{"max-batch", "GRIT_MAX_BATCH", "1000", "the most tasks, events or leases in one call"}
)

var serverKnobs = []knob{knobListen, knobTokensFile, knobTLSCert, knobTLSKey, knobMaxPayload, knobMaxBatch}

func newServerCmd(e *env) *cobra.Command {
	flags := map[string]*string{}
	cmd := &cobra.Command{
		Use:   "server",
		Short: "serve the gRPC API: enqueue, get, list, cancel, publish, dead letters, and remote workers",
		Long: `Serves grit's gRPC API (grit.v1.Tasks and grit.v1.Workers, with the
health and reflection services) on the store, until SIGTERM or Ctrl-C.
Calls carry "authorization: Bearer TOKEN"; tokens come from GRIT_TOKENS
(comma-separated) and --tokens-file. Without tokens, only a loopback
address is served. See api/README.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := func(k knob) string { s, _ := e.lookup(k, *flags[k.name]); return s }
			cfg := server.Config{CertFile: v(knobTLSCert), KeyFile: v(knobTLSKey)}
			var err error
			if cfg.MaxPayload, err = e.intKnob(knobMaxPayload, *flags[knobMaxPayload.name]); err != nil {
				return err
			}
			if cfg.MaxBatch, err = e.intKnob(knobMaxBatch, *flags[knobMaxBatch.name]); err != nil {
				return err
			}
			if cfg.PressureBase, cfg.PressureMax, cfg.RetryBudget, err = e.protection(workerFlags{pressureBase: *flags[knobPressBase.name],
				pressureMax: *flags[knobPressMax.name], budget: *flags[knobBudget.name]}); err != nil {
				return err
			}
			return e.serve(cmd.Context(), cfg, v(knobListen), v(knobTokensFile))
		},
	}
	for _, k := range append(serverKnobs, knobPressBase, knobPressMax, knobBudget) {
		flags[k.name] = new(string)
		cmd.Flags().StringVar(flags[k.name], k.name, "", fmt.Sprintf("%s (env %s%s)", k.help, k.env, orDefault(k.def)))
	}
	return cmd
}

func orDefault(def string) string {
	if def == "" {
		return ""
	}
	return ", default " + def
}

func (e *env) serve(ctx context.Context, cfg server.Config, listen, tokensFile string) error {
	tokens, err := server.LoadTokens(tokensFile, e.getenv(server.TokensEnv))
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	if _, err := server.Insecure(listen, tokens); err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("--listen %s: %w", listen, err)}
	}
	st, err := e.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	cfg.Store, cfg.Tokens = st, tokens
	cfg.Logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	s, err := server.New(cfg)
	if err != nil {
		if errors.Is(err, server.ErrConfig) {
			return &exitError{code: exitUsage, err: err}
		}
		return err
	}
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("--listen %s: %w", listen, err)}
	}
	sigCtx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(e.stdout, "serving grit.v1 on %s (store %s)\n", lis.Addr(), shownDSN(e.storeDSN))
	return s.Serve(sigCtx, lis)
}
