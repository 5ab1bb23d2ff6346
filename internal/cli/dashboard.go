package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/internal/dash"
	"github.com/grit-run/grit/internal/version"
	"github.com/grit-run/grit/store"
)

// httpOff turns the dashboard of grit server off.
const httpOff = "off"

var knobHTTP = knob{"http", "GRIT_HTTP", "127.0.0.1:7421", "the address of the web dashboard (and /metrics); off to serve none",
	func(s *settings) any { return &s.http }}

// dashboardKnobs are grit dashboard's.
var dashboardKnobs = []knob{knobHTTP, knobTokensFile, knobLease}

func newDashboardCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "serve the web dashboard on a store (grit server serves it too)",
		Long: `Serves grit's web dashboard on the store, until SIGTERM or Ctrl-C: an
overview, runs and their graphs, tasks with filters and bulk actions, a
task's attempts, dead letters by fingerprint, groups and their breakers,
workers and the audit log. grit server serves the same beside its API.

Visitors log in with a token from GRIT_TOKENS or --tokens-file; a token
followed by "read-only" in the file may look but not act. Without tokens,
only a loopback address is served, and every visitor may act. Every
action is written to the store's audit log. With --read-store (a replica
of the store), the pages read the replica, each saying how far behind the
store it is, and actions still go to the store. See docs/dashboard.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := e.settings(cmd.Flags())
			if err != nil {
				return err
			}
			return e.serveDashboard(cmd.Context(), s, asJSON)
		},
	}
	registerKnobs(cmd.Flags(), dashboardKnobs)
	cmd.Flags().BoolVar(&asJSON, "json", false, servingJSONHelp)
	return cmd
}

// checkHTTP refuses a dashboard address other machines reach without
// tokens, as the API does.
func checkHTTP(addr string, tokens []server.Token) error {
	if addr == httpOff {
		return nil
	}
	if len(tokens) > 0 || server.Loopback(addr) {
		return nil
	}
	// The dashboard's own words: the API's (server.Insecure) speak of
	// enqueueing and of its port.
	return &exitError{code: exitUsage, err: fmt.Errorf("--http %s: %w: serving the dashboard there without tokens would let anyone who reaches it read every task and cancel, replay or fail them: give tokens (%s=TOKEN1,TOKEN2, or a tokens file with one per line, e.g. --tokens-file /etc/grit/tokens), or listen on a loopback address such as 127.0.0.1:7421",
		addr, server.ErrNoTokens, server.TokensEnv)}
}

// dashboardConfig is the dashboard's configuration, for grit dashboard
// and grit server alike, from their settings, with the handler of the
// metrics it serves at /metrics (see storeMetrics).
func dashboardConfig(st store.Store, tokens []server.Token, set settings, log *slog.Logger, metrics http.Handler) dash.Config {
	return dash.Config{Store: st, Tokens: tokens, Lease: set.lease, Version: version.Get().String(), Logger: log, Metrics: metrics}
}

// loadTokens reads the tokens of grit server and grit dashboard: the
// tokens file's and GRIT_TOKENS's.
func (e *env) loadTokens(set settings) ([]server.Token, error) {
	tokens, err := server.LoadTokens(set.tokensFile, e.getenv(server.TokensEnv))
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	return tokens, nil
}

// dashboard makes the dashboard of st, whose pages read read if it is not
// nil, and listens on set.http.
func (e *env) dashboard(st, read store.Store, tokens []server.Token, set settings, metrics http.Handler) (*dash.Dashboard, net.Listener, error) {
	cfg := dashboardConfig(st, tokens, set, slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo})), metrics)
	cfg.ReadStore = read
	d, err := dash.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	l, err := net.Listen("tcp", set.http)
	if err != nil {
		d.Close()
		return nil, nil, &exitError{code: exitUsage, err: fmt.Errorf("--http %s: %w (give another address, or --http off)", set.http, err)}
	}
	return d, l, nil
}

func (e *env) serveDashboard(ctx context.Context, set settings, asJSON bool) error {
	if set.http == httpOff {
		return &exitError{code: exitUsage, err: fmt.Errorf("--http off: grit dashboard needs an address to serve, such as 127.0.0.1:7421")}
	}
	tokens, err := e.loadTokens(set)
	if err != nil {
		return err
	}
	if err := checkHTTP(set.http, tokens); err != nil {
		return err
	}
	st, err := e.openExisting(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	_, h, err := storeMetrics(st, set, e.logger(slog.LevelInfo))
	if err != nil {
		return err
	}
	var read store.Store
	if e.readDSN != "" {
		if read, err = e.openRead(ctx); err != nil {
			return err
		}
		defer read.Close()
	}
	d, l, err := e.dashboard(st, read, tokens, set, h)
	if err != nil {
		return err
	}
	sigCtx, stop := untilStopped(ctx)
	defer stop()
	if err := e.sayServing(nil, l.Addr(), asJSON); err != nil {
		l.Close()
		return err
	}
	return d.ServeListener(sigCtx, l)
}
