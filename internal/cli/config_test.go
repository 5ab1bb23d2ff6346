package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/grit-run/grit/api/client"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/internal/autotimeout"
	"github.com/grit-run/grit/internal/dash"
	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/internal/gritbench"
	"github.com/grit-run/grit/internal/testcert"
	"github.com/grit-run/grit/retention"
	"github.com/grit-run/grit/store"
)

// fakeEnv is an env whose GRIT_* variables are vars alone.
func fakeEnv(vars map[string]string) *env {
	return &env{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return vars[k] }}
}

// commandSettings parses args as the flags of the command named (e.g.
// "worker") and reads its settings as the command does.
func commandSettings(t *testing.T, e *env, name string, args ...string) (settings, *cobra.Command, error) {
	t.Helper()
	cmd, _, err := newRoot(e).Find([]string{name})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("grit %s %v: %v", name, args, err)
	}
	if err := e.storesFromFile(cmd.Flags()); err != nil { // as the root's PersistentPreRunE does
		return settings{}, cmd, err
	}
	s, err := e.settings(cmd.Flags())
	return s, cmd, err
}

func TestSettingsSources(t *testing.T) {
	t.Parallel()
	e := fakeEnv(map[string]string{"GRIT_LEASE": "30s", "GRIT_CONCURRENCY": "x"})
	s, _, err := commandSettings(t, e, "worker", "--concurrency", "7", "--drain", "1m")
	if err != nil {
		t.Fatal(err)
	}
	if s.concurrency != 7 || s.lease != 30*time.Second || s.heartbeat != 10*time.Second || s.drain != time.Minute {
		t.Errorf("settings %+v", s)
	}
	if s.sources["concurrency"] != "flag --concurrency" || s.sources["lease"] != "env GRIT_LEASE" || s.sources["heartbeat"] != "default" {
		t.Errorf("sources %v", s.sources)
	}
	if _, _, err := commandSettings(t, e, "worker"); err == nil || !strings.Contains(err.Error(), `concurrency "x" (env GRIT_CONCURRENCY): want a positive number`) {
		t.Errorf("a bad GRIT_CONCURRENCY: %v", err)
	}
	code, out, _ := grit(t, "config", "--json", "--retry-budget", "0.1,1,2")
	if code != 0 || !strings.Contains(out, `"name":"heartbeat"`) || !strings.Contains(out, `"name":"retry-budget","env":"GRIT_RETRY_BUDGET","value":"0.1,1,2","source":"flag --retry-budget"`) ||
		!strings.Contains(out, `"name":"budget-wait","env":"GRIT_BUDGET_WAIT","value":"1s","source":"default"`) {
		t.Errorf("config: exit %d %s", code, out)
	}
}

func TestSettingsErrors(t *testing.T) {
	t.Parallel()
	e := fakeEnv(map[string]string{"GRIT_RETRY_BUDGET": "0.5, 2, 20", "GRIT_PRESSURE_MAX": "10s"})
	s, _, err := commandSettings(t, e, "worker", "--pressure-base", "250ms")
	if err != nil {
		t.Fatal(err)
	}
	if s.protection.PressureBase != 250*time.Millisecond || s.protection.PressureMax != 10*time.Second || s.protection.RetryBudget != (store.BudgetRates{Ratio: 0.5, Floor: 2, Burst: 20}) {
		t.Errorf("settings %+v", s.protection)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--retry-budget", "20%"}, `retry-budget "20%" (flag --retry-budget): want RATIO,FLOOR,BURST`},
		{[]string{"--retry-budget", "0.2,1,0"}, "a burst of 0 lets no retry through: want 1 or more"},
		{[]string{"--retry-budget", "0.2,-1,10"}, "want RATIO,FLOOR,BURST, each a finite number 0 or more"},
		{[]string{"--retry-budget", "NaN,1,10"}, "each a finite number"},
		{[]string{"--pressure-base", "1m"}, "pressure max 10s is shorter than the pressure base 1m0s (pressure-base 1m from flag --pressure-base; pressure-max 10s from env GRIT_PRESSURE_MAX)"},
		{[]string{"--pressure-max", "soon"}, `pressure-max "soon" (flag --pressure-max): want a positive duration`},
		{[]string{"--budget-wait", "-1s"}, `budget-wait "-1s" (flag --budget-wait): want a positive duration`},
		{[]string{"--outage-tasks", "1"}, `outage-tasks "1" (flag --outage-tasks): want a number of tasks, 2 or more`},
		{[]string{"--breaker", "failure-ratio=2"}, `breaker "failure-ratio=2" (flag --breaker): breaker: failure ratio 2: want a number from 0 to 1`},
		{[]string{"--breaker", "cool-down=1h,max-cool-down=10m"}, "max cool-down 10m0s is shorter than the cool-down 1h0m0s"},
		{[]string{"--breaker", "cooldown=1m"}, `"cooldown": want KEY=VALUE pairs, comma-separated, with the keys window, buckets, failure-ratio`},
		{[]string{"--breaker", "probes=many"}, "probes=many: want a whole number"},
		{[]string{"--lease", "1s", "--heartbeat", "2s"}, "heartbeat 2s (flag --heartbeat) must be shorter than the lease 1s (flag --lease)"},
		{[]string{"--concurrency", "0", "--lease", "x"}, `concurrency "0" (flag --concurrency): want a positive number such as 10` + "\n" + `lease "x" (flag --lease)`},
	} {
		_, _, err := commandSettings(t, e, "worker", bad.args...)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: %v, want an error saying %q", bad.args, err, bad.want)
		}
	}
	for _, cmd := range []string{"worker", "run", "bench", "server"} {
		args := []string{cmd, "--store", tempStore(t), "--retry-budget", "0.2,1,0"}
		if cmd == "run" {
			args = append(args, example("flaky.yaml"))
		}
		code, _, errOut := grit(t, args...)
		if code != exitUsage || !strings.Contains(errOut, `retry-budget "0.2,1,0" (flag --retry-budget)`) {
			t.Errorf("grit %s with a bad budget: exit %d, %s; want %d naming it", cmd, code, errOut, exitUsage)
		}
	}
	if _, _, err := commandSettings(t, e, "server", "--rescue", "0s"); err == nil || !strings.Contains(err.Error(), `rescue "0s" (flag --rescue): want a positive duration`) {
		t.Errorf("grit server --rescue 0s: %v, want an error saying it wants a positive duration", err)
	}
	if code, out, errOut := grit(t, "config", "--breaker", "probes=many"); code != exitUsage || !strings.Contains(out, "probes=many") || !strings.Contains(errOut, "want a whole number") {
		t.Errorf("grit config with a bad knob: exit %d, %s %s; want the table, the error and exit 2", code, out, errOut)
	}
}

func FuzzParseBudget(f *testing.F) {
	for _, s := range []string{"0.2,1,10", "0,0,1", "1e308,1,1", "NaN,1,1", ",,", "0.2,1", "-0,0,1", "Inf,0,1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := parseBudget(s)
		if err != nil {
			if b != (store.BudgetRates{}) {
				t.Errorf("%q: error %v with rates %+v", s, err, b)
			}
			return
		}
		if !(b.Ratio >= 0 && b.Floor >= 0 && b.Burst >= 1) || math.IsInf(b.Ratio+b.Floor+b.Burst, 0) {
			t.Errorf("%q: accepted %+v", s, b)
		}
		if err := gate.ValidateBudget(b); err != nil {
			t.Errorf("%q: accepted %+v, which gate refuses: %v", s, b, err)
		}
	})
}

func FuzzParseBreaker(f *testing.F) {
	for _, s := range []string{"", "cool-down=1m", "failure-ratio=0.3,min-attempts=5", "ramp-up=-1s", "failure-ratio=NaN", "probes=-1", "x=1", "window=1m,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := parseBreaker(s)
		if err != nil {
			if b != (breaker.Settings{}) {
				t.Errorf("%q: error %v with settings %+v", s, err, b)
			}
			return
		}
		if err := (gate.Protection{Breaker: b}).Validate(); err != nil || math.IsNaN(b.FailureRatio) || math.IsNaN(b.RampRate) || math.IsNaN(b.RampGrowth) {
			t.Errorf("%q: accepted %+v (%v)", s, b, err)
		}
	})
}

// built is what a command built from its flags and variables: the
// settings it read and the effective configuration of what it runs.
type built struct {
	s          settings
	engine     *engine.Config // grit worker's, run's, bench's and bench's worker processes'
	server     *server.Config // grit server's
	dashboard  *dash.Config   // grit dashboard's, and grit server's
	protection gate.Protection
	alerting   alert.Alerting
	client     client.Config
	storeDSN   string
	readDSN    string
	notifyDSN  string
}

// commandPath builds, as a command does, what it runs from its settings.
type commandPath struct {
	command string // the command whose flags are parsed
	build   func(t *testing.T, e *env, cmd *cobra.Command, s settings) built
}

func engineBuilt(t *testing.T, eng *engine.Engine, err error) built {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	cfg := eng.Settings()
	return built{engine: &cfg, protection: cfg.Protection, alerting: cfg.Alerting}
}

// commandPaths are the commands that take knobs, each building what it
// runs through the functions the command itself calls.
func commandPaths(st store.Store, dsn string) map[string]commandPath {
	discard := slog.New(slog.DiscardHandler)
	return map[string]commandPath{
		"grit worker": {"worker", func(t *testing.T, _ *env, _ *cobra.Command, s settings) built {
			eng, err := engine.New(workerConfig(st, s, nil, discard))
			return engineBuilt(t, eng, err)
		}},
		"grit run": {"run", func(t *testing.T, e *env, _ *cobra.Command, s settings) built {
			eng, err := e.runEngine(st, 1, s, nil, nil)
			return engineBuilt(t, eng, err)
		}},
		"grit bench (its engines in process)": {"bench", func(t *testing.T, _ *env, _ *cobra.Command, s settings) built {
			cfg := benchConfig(gritbench.Config{}, s, "grit").Engine
			cfg.Store = st
			eng, err := engine.New(cfg)
			return engineBuilt(t, eng, err)
		}},
		// The worker processes get the settings as flags; an empty
		// environment shows that the flags carry all of them.
		"grit bench (its worker processes)": {"bench", func(t *testing.T, _ *env, _ *cobra.Command, s settings) built {
			child := benchConfig(gritbench.Config{}, s, "grit").Spawn(dsn, 3)
			ce := fakeEnv(nil)
			cs, _, err := commandSettings(t, ce, child.Args[1], child.Args[2:]...)
			if err != nil || child.Args[1] != "bench-worker" || ce.storeDSN != dsn {
				t.Fatalf("the worker process %v: %v", child.Args, err)
			}
			eng, err := engine.New(benchWorkerConfig(st, cs, 3))
			return engineBuilt(t, eng, err)
		}},
		"grit bench-worker": {"bench-worker", func(t *testing.T, _ *env, _ *cobra.Command, s settings) built {
			eng, err := engine.New(benchWorkerConfig(st, s, 3))
			return engineBuilt(t, eng, err)
		}},
		"grit server": {"server", func(t *testing.T, e *env, _ *cobra.Command, s settings) built {
			cfg, err := e.serverConfig(s)
			if err != nil {
				t.Fatal(err)
			}
			srv, err := newServer(cfg, st, discard)
			if err != nil {
				t.Fatal(err)
			}
			sc := srv.Settings()
			dc := dashboardConfig(st, cfg.Tokens, s, discard, nil)
			return built{server: &sc, dashboard: &dc, protection: sc.Protection, alerting: sc.Alerting}
		}},
		"grit dashboard": {"dashboard", func(t *testing.T, e *env, _ *cobra.Command, s settings) built {
			tokens, err := e.loadTokens(s)
			if err != nil {
				t.Fatal(err)
			}
			dc := dashboardConfig(st, tokens, s, discard, nil)
			if _, err := dash.New(dc); err != nil {
				t.Fatal(err)
			}
			return built{dashboard: &dc}
		}},
		// The client commands (enqueue, get, cancel) read their knobs from
		// the environment alone, with client.FromEnv (see env.remote).
		"grit enqueue, get, cancel": {"enqueue", func(t *testing.T, e *env, _ *cobra.Command, _ settings) built {
			cfg, _, err := client.FromEnv(e.getenv)
			if err != nil {
				t.Fatal(err)
			}
			return built{client: cfg}
		}},
	}
}

// knobCase is how TestEverySettingReachesWhatItConfigures checks one
// setting grit config lists: a value other than the default is given by
// flag and, separately, by its variable, and read back from what it
// configures.
type knobCase struct {
	value string
	also  map[string]string // knobs it needs beside it, given the same way
	// envOnly: it has no flag (via names the commands that read it).
	envOnly bool
	via     []string // the command paths that read it; default those with its flag
	// configures says what it configures; got reads that back.
	configures string
	got        func(b built) any
	want       any
}

// TestEverySettingReachesWhatItConfigures walks every setting grit config
// lists, gives it by flag and then by variable to every command that has
// it, builds the engine or server as the command does, and checks that
// the effective configuration (Settings) has it, and did not without it.
func TestEverySettingReachesWhatItConfigures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dsn := "sqlite:" + filepath.Join(dir, "grit.db")
	st := openStore(t, dsn)
	cert, key, _ := testcert.Write(t, dir)
	token := strings.Repeat("t", 32)
	schedFile := filepath.Join(dir, "beat.yaml")
	if err := os.WriteFile(schedFile, []byte("name: b\ntasks:\n  beat: {run: \"true\"}\nschedules:\n  beat: {task: beat, every: 1m}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokensFile := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokensFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	eng := func(f func(engine.Config) any) func(built) any {
		return func(b built) any { return f(*b.engine) }
	}
	srv := func(f func(server.Config) any) func(built) any {
		return func(b built) any { return f(*b.server) }
	}
	prot := func(f func(gate.Protection) any) func(built) any {
		return func(b built) any { return f(b.protection) }
	}
	cli := func(f func(client.Config) any) func(built) any {
		return func(b built) any { return f(b.client) }
	}
	clientOnly := []string{"grit enqueue, get, cancel"}
	tokenWant := []server.Token{{Value: token, Role: server.RoleOperator}}
	// tokensOf is the tokens a command gave its server and its dashboard,
	// which must be the same.
	tokensOf := func(b built) any {
		if b.server != nil && !reflect.DeepEqual(b.server.Tokens, b.dashboard.Tokens) {
			return fmt.Sprintf("the server's %v and the dashboard's %v differ", b.server.Tokens, b.dashboard.Tokens)
		}
		return b.dashboard.Tokens
	}
	cases := map[string]knobCase{
		"store": {value: "sqlite:" + filepath.Join(dir, "other.db"), via: []string{"grit worker"},
			configures: "the store every command opens (env.storeDSN, which openStore opens)",
			got:        func(b built) any { return b.storeDSN }, want: "sqlite:" + filepath.Join(dir, "other.db")},
		"read-store": {value: "postgres://grit@replica.internal:5432/app", via: []string{"grit dashboard"},
			configures: "the store the commands that only read, and the dashboard's pages, read (env.readDSN, which openRead opens)",
			got:        func(b built) any { return b.readDSN }, want: "postgres://grit@replica.internal:5432/app"},
		"notify-store": {value: "postgres://grit@db.internal:5432/app", via: []string{"grit worker"},
			configures: "the direct connection every command's PostgreSQL store listens on (env.notifyDSN, which open gives postgres.Config.NotifyDSN)",
			got:        func(b built) any { return b.notifyDSN }, want: "postgres://grit@db.internal:5432/app"},
		"worker-id":   {value: "w-7", configures: "the engine's WorkerID", got: eng(func(c engine.Config) any { return c.WorkerID }), want: "w-7"},
		"concurrency": {value: "7", configures: "the engine's Concurrency", got: eng(func(c engine.Config) any { return c.Concurrency }), want: 7},
		"lease": {value: "45s", configures: "the engine's Lease (the dashboard's, for whom a worker is silent)", got: func(b built) any {
			if b.engine == nil {
				return b.dashboard.Lease
			}
			return b.engine.Lease
		}, want: 45 * time.Second},
		"heartbeat": {value: "4s", configures: "the engine's Heartbeat", got: eng(func(c engine.Config) any { return c.Heartbeat }), want: 4 * time.Second},
		"drain": {value: "9s", configures: "how long grit worker's Stop lets running attempts finish (settings.drain bounds its context)",
			got: func(b built) any { return b.s.drain }, want: 9 * time.Second},
		"pressure-base": {value: "3s", configures: "Protection.PressureBase", got: prot(func(p gate.Protection) any { return p.PressureBase }), want: 3 * time.Second},
		"pressure-max":  {value: "7m", configures: "Protection.PressureMax", got: prot(func(p gate.Protection) any { return p.PressureMax }), want: 7 * time.Minute},
		"retry-budget": {value: "0.1,1,2", configures: "Protection.RetryBudget",
			got: prot(func(p gate.Protection) any { return p.RetryBudget }), want: store.BudgetRates{Ratio: 0.1, Floor: 1, Burst: 2}},
		"budget-wait":   {value: "250ms", configures: "Protection.BudgetWait", got: prot(func(p gate.Protection) any { return p.BudgetWait }), want: 250 * time.Millisecond},
		"outage-tasks":  {value: "12", configures: "Protection.OutageTasks", got: prot(func(p gate.Protection) any { return p.OutageTasks }), want: 12},
		"outage-window": {value: "3m", configures: "Protection.OutageWindow", got: prot(func(p gate.Protection) any { return p.OutageWindow }), want: 3 * time.Minute},
		"breaker": {value: "window=2m,buckets=12,failure-ratio=0.3,min-attempts=7,consecutive=4,cool-down=5s,max-cool-down=1m,probes=2,ramp-rate=20,ramp-growth=0.3,ramp-up=10s",
			configures: "Protection.Breaker", got: prot(func(p gate.Protection) any { return p.Breaker }),
			want: breaker.Settings{Window: 2 * time.Minute, Buckets: 12, FailureRatio: 0.3, MinAttempts: 7, Consecutive: 4,
				CoolDown: 5 * time.Second, MaxCoolDown: time.Minute, Probes: 2, RampRate: 20, RampGrowth: 0.3, RampUp: 10 * time.Second}},
		"alert-webhook": {value: "https://alerts.example/grit?token=t", configures: "Alerting.AlertWebhook (the engine's or the server's)",
			got: func(b built) any { return b.alerting.AlertWebhook }, want: "https://alerts.example/grit?token=t"},
		"allow-exec": {value: "/usr/bin/convert,backup.sh", configures: "the engine's AllowExec",
			got: eng(func(c engine.Config) any { return c.AllowExec }), want: []string{"/usr/bin/convert", "backup.sh"}},
		"metrics": {value: "127.0.0.1:9464", configures: "the address grit worker serves /metrics on (settings.metrics, given to net.Listen)",
			got: func(b built) any { return b.s.metrics }, want: "127.0.0.1:9464"},
		"retention": {value: "success=1h,mail/failed=forever", configures: "the engine's Retention",
			got: func(b built) any { return b.engine.Retention.String() }, want: mustRetention(t, "success=1h,mail/failed=forever").String()},
		"schedules": {value: schedFile, configures: "the engine's Schedules, declared when it starts",
			got: eng(func(c engine.Config) any {
				var names []string
				for _, s := range c.Schedules {
					names = append(names, s.Name+" "+s.Task.Kind)
				}
				return names
			}), want: []string{"beat exec"}},
		"auto-timeout": {value: "factor=4,floor=30s,ceiling=2h,min-runs=10,default=20m,refresh=2m",
			configures: "the engine's AutoTimeouts (the server's, for its remote workers)",
			got: func(b built) any {
				if b.engine == nil {
					return b.server.AutoTimeouts
				}
				return b.engine.AutoTimeouts
			}, want: autotimeout.Settings{Factor: 4, Floor: 30 * time.Second, Ceiling: 2 * time.Hour, MinRuns: 10, Default: 20 * time.Minute, Refresh: 2 * time.Minute}},
		"dashboard-url": {value: "https://grit.example/", configures: "Alerting.DashboardURL (the engine's or the server's)",
			got: func(b built) any { return b.alerting.DashboardURL }, want: "https://grit.example/"},
		"listen": {value: "127.0.0.1:7421", configures: "the address grit server listens on (settings.listen, given to net.Listen)",
			got: func(b built) any { return b.s.listen }, want: "127.0.0.1:7421"},
		"tokens-file":   {value: tokensFile, configures: "the server's and the dashboard's Tokens", got: tokensOf, want: tokenWant},
		"tls-cert":      {value: cert, also: map[string]string{"tls-key": key}, configures: "the server's CertFile", got: srv(func(c server.Config) any { return c.CertFile }), want: cert},
		"tls-key":       {value: key, also: map[string]string{"tls-cert": cert}, configures: "the server's KeyFile", got: srv(func(c server.Config) any { return c.KeyFile }), want: key},
		"max-payload":   {value: "2048", configures: "the server's MaxPayload", got: srv(func(c server.Config) any { return c.MaxPayload }), want: 2048},
		"max-batch":     {value: "77", configures: "the server's MaxBatch", got: srv(func(c server.Config) any { return c.MaxBatch }), want: 77},
		"max-message":   {value: "4194304", configures: "the server's MaxMessage", got: srv(func(c server.Config) any { return c.MaxMessage }), want: 4194304},
		"max-in-flight": {value: "9", configures: "the server's MaxInFlight", got: srv(func(c server.Config) any { return c.MaxInFlight }), want: 9},
		"rescue":        {value: "2s", configures: "the server's Rescue", got: srv(func(c server.Config) any { return c.Rescue }), want: 2 * time.Second},
		"tokens": {value: token, envOnly: true, via: []string{"grit server", "grit dashboard"}, configures: "the server's and the dashboard's Tokens (GRIT_TOKENS; --tokens-file is the flag)",
			got: tokensOf, want: tokenWant},
		"http": {value: "127.0.0.1:7499", configures: "the address the dashboard listens on (settings.http, given to net.Listen)",
			got: func(b built) any { return b.s.http }, want: "127.0.0.1:7499"},
		"server": {value: "grit.example:7420", envOnly: true, via: clientOnly, configures: "the client's Addr (the commands' --server overrides it)",
			got: cli(func(c client.Config) any { return c.Addr }), want: "grit.example:7420"},
		"grpc-timeout": {value: "3s", envOnly: true, via: clientOnly, configures: "the client's Timeout",
			got: cli(func(c client.Config) any { return c.Timeout }), want: 3 * time.Second},
		"send-retries": {value: "5", envOnly: true, via: clientOnly, configures: "the client's SendRetries",
			got: cli(func(c client.Config) any { return c.SendRetries }), want: 5},
		"send-backoff-ms": {value: "250", envOnly: true, via: clientOnly, configures: "the client's SendBackoff",
			got: cli(func(c client.Config) any { return c.SendBackoff }), want: 250 * time.Millisecond},
		"max-batch-size": {value: "9", envOnly: true, via: clientOnly, configures: "the client's MaxBatchSize",
			got: cli(func(c client.Config) any { return c.MaxBatchSize }), want: 9},
		"flush-interval": {value: "0.5", envOnly: true, via: clientOnly, configures: "the client's FlushInterval",
			got: cli(func(c client.Config) any { return c.FlushInterval }), want: 500 * time.Millisecond},
		"report-batch-size": {value: "7", envOnly: true, via: clientOnly, configures: "the client's ReportBatchSize",
			got: cli(func(c client.Config) any { return c.ReportBatchSize }), want: 7},
		"report-interval": {value: "5ms", envOnly: true, via: clientOnly, configures: "the client's ReportInterval",
			got: cli(func(c client.Config) any { return c.ReportInterval }), want: 5 * time.Millisecond},
		"server-tls": {value: "true", envOnly: true, via: clientOnly, configures: "the client's TLS",
			got: cli(func(c client.Config) any { return c.TLS }), want: true},
		"server-ca": {value: cert, envOnly: true, via: clientOnly, configures: "the client's CAFile",
			got: cli(func(c client.Config) any { return c.CAFile }), want: cert},
		"token": {value: token, envOnly: true, via: clientOnly, configures: "the client's Token",
			got: cli(func(c client.Config) any { return c.Token }), want: token},
	}

	paths := commandPaths(st, dsn)
	rows, err := fakeEnv(nil).configRows(settings{}, "default", "default", "default")
	if err != nil {
		t.Fatal(err)
	}
	checkPathsCoverKnobs(t, paths)
	for _, row := range rows {
		c, ok := cases[row.Name]
		if !ok {
			t.Errorf("grit config lists %s (%s) but no case here checks it: add one saying what it configures", row.Name, row.Env)
			continue
		}
		delete(cases, row.Name)
		via := c.via
		if via == nil {
			via = pathsWithKnob(t, paths, row.Name)
		}
		if len(via) == 0 {
			t.Errorf("%s: no command takes it", row.Name)
		}
		for _, name := range via {
			p, ok := paths[name]
			if !ok {
				t.Fatalf("%s: no command path %q", row.Name, name)
			}
			run := func(how string, vars map[string]string, args ...string) any {
				e := fakeEnv(vars)
				s, cmd, err := commandSettings(t, e, p.command, args...)
				if err != nil {
					t.Fatalf("%s: %s %s: %v", row.Name, name, how, err)
				}
				b := p.build(t, e, cmd, s)
				b.s, b.storeDSN, b.readDSN, b.notifyDSN = s, e.storeDSN, e.readDSN, e.notifyDSN
				return c.got(b)
			}
			t.Run(row.Name+"/"+name, func(t *testing.T) {
				if got := run("at its default", nil); reflect.DeepEqual(got, c.want) {
					t.Fatalf("%s is %v already at the default: give it another value", c.configures, got)
				}
				if !c.envOnly {
					args := []string{"--" + row.Name + "=" + c.value}
					for k, v := range c.also {
						args = append(args, "--"+k+"="+v)
					}
					if got := run("by flag", nil, args...); !reflect.DeepEqual(got, c.want) {
						t.Errorf("%s --%s %s: %s is %v, want %v", name, row.Name, c.value, c.configures, got, c.want)
					}
				}
				vars := map[string]string{row.Env: c.value}
				for k, v := range c.also {
					vars[envOf(t, k)] = v
				}
				if got := run("by variable", vars); !reflect.DeepEqual(got, c.want) {
					t.Errorf("%s with %s=%s: %s is %v, want %v", name, row.Env, c.value, c.configures, got, c.want)
				}
				if slices.Contains(configKeys(), row.Name) {
					body := fmt.Sprintf("%s: %q\n", row.Name, c.value)
					for k, v := range c.also {
						body += fmt.Sprintf("%s: %q\n", k, v)
					}
					file := filepath.Join(t.TempDir(), "grit.yaml")
					os.WriteFile(file, []byte(body), 0o600)
					if got := run("by config file", map[string]string{configFlag.env: file}); !reflect.DeepEqual(got, c.want) {
						t.Errorf("%s with %s: %s in a config file: %s is %v, want %v", name, row.Name, c.value, c.configures, got, c.want)
					}
				}
			})
		}
	}
	for name := range cases {
		t.Errorf("case %s: grit config does not list it", name)
	}
}

// pathsWithKnob names the command paths whose command has the knob's flag.
func pathsWithKnob(t *testing.T, paths map[string]commandPath, knobName string) []string {
	var out []string
	for name, p := range paths {
		cmd, _, err := newRoot(fakeEnv(nil)).Find([]string{p.command})
		if err != nil {
			t.Fatal(err)
		}
		if fl := cmd.Flags().Lookup(knobName); fl != nil && fl.Annotations[knobAnnotation] != nil {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// checkPathsCoverKnobs fails for a command that takes knobs but has no
// path here that builds what it runs (grit config only shows them).
func checkPathsCoverKnobs(t *testing.T, paths map[string]commandPath) {
	covered := map[string]bool{"config": true}
	for _, p := range paths {
		covered[p.command] = true
	}
	for _, cmd := range newRoot(fakeEnv(nil)).Commands() {
		has := false
		cmd.Flags().VisitAll(func(f *pflag.Flag) { has = has || f.Annotations[knobAnnotation] != nil })
		if has && !covered[cmd.Name()] {
			t.Errorf("grit %s takes knobs, but no command path here builds what it runs", cmd.Name())
		}
	}
}

func envOf(t *testing.T, knobName string) string {
	for _, k := range allKnobs() {
		if k.name == knobName {
			return k.env
		}
	}
	t.Fatalf("no knob %s", knobName)
	return ""
}

// TestConfigListsEveryKnob: grit config --json has a row for every knob,
// with the flags it was given.
// TestConfigMasksTheStorePassword: grit config shows where the store is,
// not its password.
func TestConfigMasksTheStorePassword(t *testing.T) {
	t.Parallel()
	code, out, errOut := grit(t, "config", "--store", "postgres://grit:s3cret@db.internal:5432/app")
	if code != 0 || strings.Contains(out, "s3cret") || !strings.Contains(out, "postgres://grit:xxxxx@db.internal:5432/app") {
		t.Errorf("config: exit %d, stdout:\n%s\nstderr: %s\nwant the store with its password masked", code, out, errOut)
	}
}

// TestConfigMasksTheWebhookSecret: grit config shows the alert webhook
// with its password, its query's values and the key in its path masked,
// and where it came from; a bad one is refused without its secret.
func TestConfigMasksTheWebhookSecret(t *testing.T) {
	t.Parallel()
	hook := "https://ops:pw0rd@hooks.example/services/T0123456789/hook?token=s3cret"
	code, out, errOut := grit(t, "config", "--alert-webhook", hook)
	if code != 0 || !strings.Contains(out, "https://xxxxx@hooks.example/services/xxxxx/hook?token=xxxxx") || !strings.Contains(out, "flag --alert-webhook") {
		t.Errorf("config: exit %d, stdout:\n%s\nstderr: %s\nwant the webhook masked, from its flag", code, out, errOut)
	}
	code, out, errOut = grit(t, "config")
	if code != 0 || !regexp.MustCompile(`alert-webhook\s+GRIT_ALERT_WEBHOOK\s+\(none\)\s+default`).MatchString(out) {
		t.Errorf("config without a webhook: exit %d, %s %s", code, out, errOut)
	}
	for _, cmd := range []string{"worker", "server", "config"} {
		code, out, errOut := grit(t, cmd, "--store", tempStore(t), "--alert-webhook", "ftp://ops:pw0rd@hooks.example/T0123456789?token=s3cret")
		if code != exitUsage || !strings.Contains(errOut, "want an http or https URL") || !strings.Contains(errOut, "(flag --alert-webhook)") ||
			strings.Contains(out+errOut, "pw0rd") || strings.Contains(out+errOut, "s3cret") || strings.Contains(out+errOut, "T0123456789") {
			t.Errorf("grit %s with a bad webhook: exit %d, %s %s; want %d naming it, without its secrets", cmd, code, out, errOut, exitUsage)
		}
	}
}

func TestConfigListsEveryKnob(t *testing.T) {
	t.Parallel()
	code, out, errOut := grit(t, "config", "--json", "--retry-budget", "100,1000,1000", "--budget-wait", "2s")
	var rows []configRow
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil {
		t.Fatalf("config: exit %d, %v: %s %s", code, err, out, errOut)
	}
	byName := map[string]configRow{}
	for _, r := range rows {
		byName[r.Name] = r
	}
	for _, k := range allKnobs() {
		if _, ok := byName[k.name]; !ok {
			t.Errorf("no row for %s", k.name)
		}
	}
	if r := byName["retry-budget"]; r.Value != "100,1000,1000" || r.Source != "flag --retry-budget" {
		t.Errorf("retry-budget row %+v", r)
	}
	if r := byName["budget-wait"]; r.Value != "2s" || r.Source != "flag --budget-wait" {
		t.Errorf("budget-wait row %+v", r)
	}
}

func mustRetention(t *testing.T, s string) retention.Policy {
	p, err := retention.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
