package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
)

// The server's own knobs; it has the downstream protection's too.
var (
	knobListen = knob{"listen", "GRIT_LISTEN", "127.0.0.1:7420", "the address to serve the gRPC API on",
		func(s *settings) any { return &s.listen }}
	knobTokensFile = knob{"tokens-file", "GRIT_TOKENS_FILE", "", "a file of bearer tokens, one per line (GRIT_TOKENS adds comma-separated ones); without any, only a loopback address is served",
		func(s *settings) any { return &s.tokensFile }}
	knobTLSCert = knob{"tls-cert", "GRIT_TLS_CERT", "", "a PEM certificate (with its chain): serve TLS",
		func(s *settings) any { return &s.tlsCert }}
	knobTLSKey = knob{"tls-key", "GRIT_TLS_KEY", "", "the certificate's PEM key",
		func(s *settings) any { return &s.tlsKey }}
	knobMaxPayload = knob{"max-payload", "GRIT_MAX_PAYLOAD", strconv.Itoa(server.DefaultMaxPayload), "the largest args, payload or output, in bytes",
		func(s *settings) any { return &s.maxPayload }}
	knobMaxBatch = knob{"max-batch", "GRIT_MAX_BATCH", strconv.Itoa(server.DefaultMaxBatch), "the most tasks, events or leases in one call",
		func(s *settings) any { return &s.maxBatch }}
	knobMaxMessage = knob{"max-message", "GRIT_MAX_MESSAGE", "", "the largest request served, in bytes; a larger one is refused, MESSAGE_TOO_LARGE, without being decoded (unset: room for --max-batch items of --max-payload, at most 16 MiB)",
		func(s *settings) any { return &s.maxMessage }}
	knobMaxInFlight = knob{"max-in-flight", "GRIT_MAX_IN_FLIGHT", "", "the most requests read and worked at once (waiting claims aside); more are refused unread, busy, so that requests in flight hold at most about this × 2 × --max-message (unset: no bound)",
		func(s *settings) any { return &s.maxInFlight }}
	knobRescue = knob{"rescue", "GRIT_RESCUE", retry.FormatDuration(server.DefaultRescue), "how often the server takes over the tasks of remote workers whose lease expired: a dead worker's task is claimable again within the lease plus this",
		func(s *settings) any { return &s.rescue }}
)

var serverOwnKnobs = []knob{knobListen, knobTokensFile, knobTLSCert, knobTLSKey, knobMaxPayload, knobMaxBatch, knobMaxMessage, knobMaxInFlight, knobRescue, knobHTTP}

func newServerCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "server",
		Short: "serve the gRPC API: enqueue, get, list, cancel, publish, dead letters, and remote workers",
		Long: `Serves grit's gRPC API (grit.v1.TasksService and grit.v1.WorkersService, with the
health and reflection services) on the store, until SIGTERM or Ctrl-C.
Calls carry "authorization: Bearer TOKEN"; tokens come from GRIT_TOKENS
(comma-separated) and --tokens-file. Without tokens, only a loopback
address is served. Remote workers' claims get the same downstream
protection as a grit worker's, set by the same flags and variables, and
their dead letters and the breakers they open alert the same webhook
(--alert-webhook, GRIT_ALERT_WEBHOOK; see docs/alerts.md). See
api/README.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := e.settings(cmd.Flags())
			if err != nil {
				return err
			}
			return e.serve(cmd.Context(), s, asJSON)
		},
	}
	registerKnobs(cmd.Flags(), append(append(append([]knob{}, serverOwnKnobs...), protectionKnobs...), append(alertKnobs, knobAutoTimeout)...))
	cmd.Flags().BoolVar(&asJSON, "json", false, servingJSONHelp)
	return cmd
}

// serverConfig is grit server's configuration from its settings, but its
// store and logger. Its Protection and Alerting are the settings' ones,
// as the engines' are (engineConfig): a knob means the same for both.
func (e *env) serverConfig(s settings) (server.Config, error) {
	tokens, err := e.loadTokens(s)
	if err != nil {
		return server.Config{}, err
	}
	if _, err := server.Insecure(s.listen, tokens); err != nil {
		return server.Config{}, &exitError{code: exitUsage, err: fmt.Errorf("--listen %s: %w", s.listen, err)}
	}
	if err := checkHTTP(s.http, tokens); err != nil {
		return server.Config{}, err
	}
	return server.Config{
		Tokens: tokens, CertFile: s.tlsCert, KeyFile: s.tlsKey, MaxPayload: s.maxPayload, MaxBatch: s.maxBatch,
		MaxMessage: s.maxMessage, MaxInFlight: s.maxInFlight, Rescue: s.rescue,
		Protection: s.protection, Alerting: s.alerting, AutoTimeouts: s.autoTimeouts,
	}, nil
}

// servingJSONHelp is --json's help of the commands that serve.
const servingJSONHelp = `print JSON once listening: {"api": HOST:PORT, "dashboard": URL, "store": DSN} (null for what is not served)`

// servingJSON is what grit server and grit dashboard print with --json
// once they listen: one object, then nothing until they stop.
type servingJSON struct {
	API       *string `json:"api"`
	Dashboard *string `json:"dashboard"`
	Store     string  `json:"store"`
	// ReadStore is the --read-store the dashboard's pages read, if any.
	ReadStore *string `json:"read_store,omitempty"`
}

// sayServing says where grit serves its API and its dashboard (nil: not
// served).
func (e *env) sayServing(api, dashboard net.Addr, asJSON bool) error {
	out := servingJSON{Store: shownDSN(e.storeDSN)}
	reading := ""
	if e.readDSN != "" {
		r := shownDSN(e.readDSN)
		out.ReadStore, reading = &r, ", its pages reading "+r
	}
	if api != nil {
		a := api.String()
		out.API = &a
	}
	if dashboard != nil {
		u := "http://" + dashboard.String()
		out.Dashboard = &u
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(out)
	}
	switch {
	case out.API != nil:
		fmt.Fprintf(e.stdout, "serving grit.v1 on %s (store %s)\n", *out.API, out.Store)
		if out.Dashboard != nil {
			fmt.Fprintf(e.stdout, "dashboard on %s\n", *out.Dashboard)
		}
	case out.Dashboard != nil:
		fmt.Fprintf(e.stdout, "dashboard on %s (store %s%s)\n", *out.Dashboard, out.Store, reading)
	}
	return nil
}

// newServer returns grit server's server over st.
func newServer(cfg server.Config, st store.Store, log *slog.Logger) (*server.Server, error) {
	cfg.Store, cfg.Logger = st, log
	s, err := server.New(cfg)
	if errors.Is(err, server.ErrConfig) {
		return nil, &exitError{code: exitUsage, err: err}
	}
	return s, err
}

func (e *env) serve(ctx context.Context, set settings, asJSON bool) error {
	cfg, err := e.serverConfig(set)
	if err != nil {
		return err
	}
	tp, stopTracing, err := e.tracerProvider(ctx)
	if err != nil {
		return err
	}
	defer stopTracing()
	cfg.TracerProvider = tp
	st, err := e.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	var metricsHandler http.Handler
	if set.http != httpOff {
		// The remote workers' attempts are counted into what the dashboard
		// serves at /metrics.
		if cfg.Metrics, metricsHandler, err = storeMetrics(st, set, e.logger(slog.LevelInfo)); err != nil {
			return err
		}
	}
	s, err := newServer(cfg, st, e.logger(slog.LevelInfo))
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", set.listen)
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("--listen %s: %w", set.listen, err)}
	}
	sigCtx, stop := untilStopped(ctx)
	defer stop()
	if set.http == httpOff {
		if err := e.sayServing(lis.Addr(), nil, asJSON); err != nil {
			lis.Close()
			return err
		}
		return s.Serve(sigCtx, lis)
	}
	d, hl, err := e.dashboard(st, nil, cfg.Tokens, set, metricsHandler)
	if err != nil {
		lis.Close()
		return err
	}
	if err := e.sayServing(lis.Addr(), hl.Addr(), asJSON); err != nil {
		lis.Close()
		hl.Close()
		return err
	}
	sctx, cancel := context.WithCancel(sigCtx)
	defer cancel()
	dashDone := make(chan error, 1)
	go func() { dashDone <- d.ServeListener(sctx, hl); cancel() }()
	err = s.Serve(sctx, lis)
	cancel()
	return errors.Join(err, <-dashDone)
}
