package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/internal/autotimeout"
	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/internal/tracing"
	"github.com/grit-run/grit/retention"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// knob is one setting a deployment tunes: a flag value if given, else its
// GRIT_* environment variable, else the default. field is where its value
// goes in the settings; the field's type says how the value is read.
type knob struct {
	name, env, def, help string
	field                func(*settings) any
}

// settings are what the knobs set. Commands get them from env.settings
// alone; a knob a command does not register leaves its field zero.
type settings struct {
	workerID         string
	concurrency      int
	lease, heartbeat time.Duration
	drain            time.Duration
	// protection is the downstream protection of the engines of grit
	// worker, grit run and grit bench, and of grit server's remote workers
	// alike: one knob means the same thing for all of them.
	protection gate.Protection
	// alerting is where the alerts of the engines of grit worker and grit
	// run, and of grit server's remote workers, go: one knob for all.
	alerting alert.Alerting
	// retention is how long the engines of grit worker and grit run keep
	// finished tasks and stopped workers' rows.
	retention retention.Policy
	// schedules are the schedules of the task files grit worker
	// declares when it starts.
	schedules []schedule.Schedule
	// autoTimeouts is how the engines of grit worker and grit run, and
	// grit server for its remote workers, choose auto timeouts.
	autoTimeouts autotimeout.Settings

	// metrics is the address grit worker serves /metrics on; "" is none.
	metrics string
	// allowExec is which process tasks from the API, or from another
	// host's task files, the engine runs (engine.Config.AllowExec).
	allowExec []string

	listen, tokensFile, tlsCert, tlsKey string
	maxPayload, maxBatch                int
	maxMessage, maxInFlight             int
	rescue                              time.Duration
	// http is the dashboard's address ("off": none).
	http string

	// values and sources are each knob's value as given, and where it
	// came from: "flag --NAME", "env GRIT_NAME" or "default".
	values, sources map[string]string
}

// The worker's knobs, shared by grit run and grit worker (and the lease
// and heartbeat by grit bench).
var (
	knobWorkerID = knob{"worker-id", "GRIT_WORKER_ID", "", "the worker's identity; a worker restarted under the same one releases its predecessor's tasks at once (default host-pid-random)",
		func(s *settings) any { return &s.workerID }}
	knobConcurrency = knob{"concurrency", "GRIT_CONCURRENCY", strconv.Itoa(gate.DefaultConcurrency), "attempts running at once",
		func(s *settings) any { return &s.concurrency }}
	knobLease = knob{"lease", "GRIT_LEASE", retry.FormatDuration(gate.DefaultLease), "how long a claim holds a task without a heartbeat",
		func(s *settings) any { return &s.lease }}
	knobHeartbeat = knob{"heartbeat", "GRIT_HEARTBEAT", "", "how often leases are renewed, by default a third of the lease",
		func(s *settings) any { return &s.heartbeat }}
	knobDrain = knob{"drain", "GRIT_DRAIN", "30s", "how long a stopping worker lets running attempts finish",
		func(s *settings) any { return &s.drain }}
)

// The downstream protection's knobs (gate.Protection), which every command
// that claims tasks has: grit worker, grit run, grit bench and grit server.
// Their defaults are gate's.
var (
	knobPressBase = knob{"pressure-base", "GRIT_PRESSURE_BASE", retry.FormatDuration(gate.DefaultPressureBase), "how long a resource failure first holds its group back; each further one doubles it",
		func(s *settings) any { return &s.protection.PressureBase }}
	knobPressMax = knob{"pressure-max", "GRIT_PRESSURE_MAX", retry.FormatDuration(gate.DefaultPressureMax), "the longest a group's resource pressure holds it back",
		func(s *settings) any { return &s.protection.PressureMax }}
	knobBudget = knob{"retry-budget", "GRIT_RETRY_BUDGET", formatBudget(store.DefaultBudget), "each group's retries, fleet-wide: RATIO of first attempts, FLOOR a second beyond it, BURST at most at once",
		func(s *settings) any { return &s.protection.RetryBudget }}
	knobBudgetWait = knob{"budget-wait", "GRIT_BUDGET_WAIT", retry.FormatDuration(gate.DefaultBudgetWait), "how long a retry its group's budget refused waits before it is claimed again, using no attempt (plus the time the budget's floor takes to bring its turn)",
		func(s *settings) any { return &s.protection.BudgetWait }}
	knobBreaker = knob{"breaker", "GRIT_BREAKER", "", "the groups' circuit breakers, as KEY=VALUE,…: window, buckets, failure-ratio, min-attempts, consecutive, cool-down, max-cool-down, probes, ramp-up, ramp-start " +
		"(default window=1m,buckets=10,failure-ratio=0.5,min-attempts=20,consecutive=0,cool-down=30s,max-cool-down=10m,probes=3,ramp-up=30s,ramp-start=0.1); a group's own settings (grit breakers set GROUP) replace them",
		func(s *settings) any { return &s.protection.Breaker }}
	knobOutageTasks = knob{"outage-tasks", "GRIT_OUTAGE_TASKS", strconv.Itoa(gate.DefaultOutageTasks), "how many distinct tasks of a group (or of a kind without one) failing alike, with none succeeding, make a failure an outage to hold rather than poison to dead-letter or a retry on its own backoff (2 or more; off turns the outage detector off)",
		func(s *settings) any { return (*outageTasks)(&s.protection.OutageTasks) }}
	knobOutageWindow = knob{"outage-window", "GRIT_OUTAGE_WINDOW", retry.FormatDuration(gate.DefaultOutageWindow), "how far back the outage detector counts those failures and looks for a success",
		func(s *settings) any { return &s.protection.OutageWindow }}
)

// outageTasks is Protection.OutageTasks as its knob reads it: a number,
// or off (-1).
type outageTasks int

// knobAlertWebhook is where grit worker, grit run and grit server POST
// their alerts (alert.Alerting.AlertWebhook). Its value may hold a
// secret: it is shown redacted (alert.Redact).
var knobAlertWebhook = knob{"alert-webhook", "GRIT_ALERT_WEBHOOK", "", "an http or https URL to POST an alert to, as JSON, when a task is dead-lettered, a group's breaker opens or an outage is held (see docs/alerts.md)",
	func(s *settings) any { return &s.alerting.AlertWebhook }}

var knobRetention = knob{"retention", "GRIT_RETENTION", retention.Default().String(), "how long finished tasks are kept before workers prune them, as STATE=DURATION,… (success, cancelled, failed, upstream_failed, skipped), QUEUE/STATE=DURATION for a queue of its own, and workers=DURATION for stopped workers' rows; durations like 36h, 7d or forever; off keeps everything (see docs/retention.md)",
	func(s *settings) any { return &s.retention }}

var knobDashboardURL = knob{"dashboard-url", "GRIT_DASHBOARD_URL", "", "the dashboard's base URL, such as https://grit.example.com: alerts link to its pages instead of naming a grit command",
	func(s *settings) any { return &s.alerting.DashboardURL }}

// knobMetrics is the address grit worker serves its Prometheus metrics
// on.
var knobSchedules = knob{"schedules", "GRIT_SCHEDULES", "", "task files (comma-separated) whose schedules: sections the worker declares in the store when it starts (see docs/schedules.md); every worker ticks every schedule the store holds, whoever declared it",
	func(s *settings) any { return &s.schedules }}

// knobAllowExec lets grit worker run process tasks that came from
// elsewhere than this host's task files: --allow-exec alone all of them.
var knobAllowExec = knob{"allow-exec", "GRIT_ALLOW_EXEC", "", "run process tasks (kind exec) enqueued through the API or from another host's task files: --allow-exec alone (or *) all of them, " +
	"--allow-exec=/usr/bin/convert,backup.sh only those commands (a task's exact first word, without a shell); default none: they fail, saying so. An operator token with the right exec can make such a worker run any command it allows",
	func(s *settings) any { return &s.allowExec }}

var knobMetrics = knob{"metrics", "GRIT_METRICS", "", "an address (HOST:PORT, or :PORT for every interface) to serve Prometheus metrics on, at /metrics (see docs/observability.md); default none",
	func(s *settings) any { return &s.metrics }}

var (
	protectionKnobs = []knob{knobPressBase, knobPressMax, knobBudget, knobBudgetWait, knobBreaker, knobOutageTasks, knobOutageWindow}
	alertKnobs      = []knob{knobAlertWebhook, knobDashboardURL}
	// workerKnobs are grit worker's and grit run's knobs.
	workerKnobs = append(append([]knob{knobWorkerID, knobConcurrency, knobLease, knobHeartbeat, knobDrain, knobRetention, knobAutoTimeout, knobAllowExec}, protectionKnobs...), alertKnobs...)
	// benchKnobs are grit bench's, which it passes on to its worker
	// processes; its concurrency is a measurement's, not a knob.
	benchKnobs = append([]knob{knobLease, knobHeartbeat}, protectionKnobs...)
)

// allKnobs are the knobs with flags, in the order settings reads them
// (the lease before the heartbeat) and grit config lists them.
func allKnobs() []knob {
	return append(append([]knob{}, workerKnobs...), append([]knob{knobMetrics, knobSchedules}, serverOwnKnobs...)...)
}

// knobAnnotation marks a flag as a knob's, for settings to find.
const knobAnnotation = "grit-knob"

// registerKnobs adds the knobs' flags to a command; settings reads them.
func registerKnobs(fs *pflag.FlagSet, ks []knob) {
	for _, k := range ks {
		fs.String(k.name, "", fmt.Sprintf("%s (env %s%s)", k.help, k.env, orDefault(k.def)))
		fs.SetAnnotation(k.name, knobAnnotation, []string{k.env})
		if k.name == knobAllowExec.name {
			fs.Lookup(k.name).NoOptDefVal = task.AllowAllExec // --allow-exec alone allows them all
		}
	}
}

func orDefault(def string) string {
	if def == "" {
		return ""
	}
	return ", default " + def
}

// lookup returns the knob's value and where it came from: its flag, its
// variable, the config file (read already: see settings), or its default.
func (e *env) lookup(k knob, flag string) (string, string) {
	if flag != "" {
		return flag, "flag --" + k.name
	}
	if v := e.getenv(k.env); v != "" {
		return v, "env " + k.env
	}
	if v, src, ok := e.config.value(k.name); ok {
		return v, src
	}
	return k.def, "default"
}

// settings turns the knobs a command registered (registerKnobs) into its
// settings: each knob's flag if given, else its GRIT_* variable, else its
// default, read and checked here, the downstream protection by
// gate.Protection's own checks. It is the one way commands read knobs.
// Bad values are one usage error naming each, where it came from and what
// it wants; the settings come back with it, for grit config to show.
func (e *env) settings(fs *pflag.FlagSet) (settings, error) {
	s := settings{values: map[string]string{}, sources: map[string]string{}}
	if _, err := e.loadConfig(); err != nil {
		return s, err
	}
	var errs []error
	for _, k := range allKnobs() {
		fl := fs.Lookup(k.name)
		if fl == nil || fl.Annotations[knobAnnotation] == nil {
			continue // not this command's
		}
		v, src := e.lookup(k, fl.Value.String())
		s.values[k.name], s.sources[k.name] = v, src
		if err := k.set(&s, v); err != nil {
			errs = append(errs, fmt.Errorf("%s %q (%s): %w", k.name, k.shown(v), src, err))
		}
	}
	if src, ok := s.sources[knobHeartbeat.name]; ok && src == "default" {
		s.heartbeat = s.lease / 3
	}
	if len(errs) == 0 {
		errs = s.check()
	}
	if err := errors.Join(errs...); err != nil {
		return s, &exitError{code: exitUsage, err: err}
	}
	return s, nil
}

// check finds the settings that are bad together.
func (s *settings) check() []error {
	var errs []error
	if src, ok := s.sources[knobHeartbeat.name]; ok && src != "default" && s.heartbeat >= s.lease {
		errs = append(errs, fmt.Errorf("heartbeat %v (%s) must be shorter than the lease %v (%s): a third of it is usual",
			s.heartbeat, src, s.lease, s.sources[knobLease.name]))
	}
	if err := s.protection.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("%w (%s)", err, s.culprits(protectionKnobs)))
	}
	if err := s.alerting.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("%w (%s)", err, s.sources[knobAlertWebhook.name]))
	}
	return errs
}

// shown is a value of the knob fit to print: a URL that may hold a
// secret (the alert webhook's) redacted.
func (k knob) shown(v string) string {
	if k.name == knobAlertWebhook.name {
		return alert.Redact(v)
	}
	return v
}

// culprits says which of the knobs given make the protection bad: those
// whose default would make it good, else all those given; and where each
// came from.
func (s *settings) culprits(ks []knob) string {
	var given, culprits []string
	for _, k := range ks {
		src := s.sources[k.name]
		if src == "" || src == "default" {
			continue
		}
		say := fmt.Sprintf("%s %s from %s", k.name, s.values[k.name], src)
		given = append(given, say)
		alt := *s
		if k.set(&alt, k.def) == nil && alt.protection.Validate() == nil {
			culprits = append(culprits, say)
		}
	}
	if len(culprits) == 0 {
		culprits = given
	}
	return strings.Join(culprits, "; ")
}

// set reads v into the knob's field of s; the error says what it wants.
func (k knob) set(s *settings, v string) error {
	switch p := k.field(s).(type) {
	case *string:
		*p = v
		return nil
	case *int:
		return k.setInt(p, v)
	case *outageTasks:
		return k.setOutageTasks(p, v)
	case *time.Duration:
		return k.setDuration(p, v)
	case *store.BudgetRates:
		return parseInto(p, v, parseBudget)
	case *autotimeout.Settings:
		return parseInto(p, v, parseAutoTimeouts)
	case *breaker.Settings:
		return parseInto(p, v, parseBreaker)
	case *[]schedule.Schedule:
		if v == "" {
			return nil
		}
		return parseInto(p, strings.Split(v, ","), fileSchedules)
	case *retention.Policy:
		return parseInto(p, v, parseRetention)
	case *[]string:
		return parseInto(p, v, parseAllowExec)
	default:
		panic(fmt.Sprintf("knob %s: no reader for %T", k.name, p))
	}
}

func (k knob) setInt(p *int, v string) error {
	if v == "" {
		return nil // no default of its own: the server's (max-message)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		if k.def == "" {
			return errors.New("want a positive number")
		}
		return fmt.Errorf("want a positive number such as %s", k.def)
	}
	*p = n
	return nil
}

func (k knob) setOutageTasks(p *outageTasks, v string) error {
	if v == "off" {
		*p = -1
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 2 {
		return fmt.Errorf("want a number of tasks, 2 or more, such as %s; or off", k.def)
	}
	*p = outageTasks(n)
	return nil
}

func (k knob) setDuration(p *time.Duration, v string) error {
	if v == "" {
		return nil // no default of its own: see settings
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return fmt.Errorf("want a positive duration such as %s", cmpOr(k.def, "5s"))
	}
	*p = d
	return nil
}

// parseInto sets *p to what parse reads from v; on an error it leaves *p
// as it was.
func parseInto[V, T any](p *T, v V, parse func(V) (T, error)) error {
	x, err := parse(v)
	if err != nil {
		return err
	}
	*p = x
	return nil
}

func parseRetention(v string) (retention.Policy, error) {
	r, err := retention.Parse(v)
	if err != nil {
		// The knob's error names the flag and the value already.
		return r, errors.New(strings.TrimPrefix(err.Error(), fmt.Sprintf("retention %q: ", v)))
	}
	return r, nil
}

func cmpOr(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// parseBudget reads a retry budget, RATIO,FLOOR,BURST, checked by
// gate.ValidateBudget.
func parseBudget(s string) (store.BudgetRates, error) {
	parts := strings.Split(s, ",")
	var v [3]float64
	ok := len(parts) == 3
	for i := 0; ok && i < 3; i++ {
		f, err := strconv.ParseFloat(strings.TrimSpace(parts[i]), 64)
		ok = err == nil
		v[i] = f
	}
	if !ok {
		return store.BudgetRates{}, errors.New("want RATIO,FLOOR,BURST, such as 0.2,1,10: retries may be RATIO of first attempts plus FLOOR a second, BURST (1 or more) at once")
	}
	r := store.BudgetRates{Ratio: v[0], Floor: v[1], Burst: v[2]}
	if err := gate.ValidateBudget(r); err != nil {
		return store.BudgetRates{}, err
	}
	return r, nil
}

func formatBudget(r store.BudgetRates) string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	return f(r.Ratio) + "," + f(r.Floor) + "," + f(r.Burst)
}

// breakerKeys are the keys of the breaker knob: breaker.Settings' fields,
// named as grit breakers set's flags are.
var breakerKeys = []struct {
	key   string
	field func(*breaker.Settings) any
}{
	{"window", func(b *breaker.Settings) any { return &b.Window }},
	{"buckets", func(b *breaker.Settings) any { return &b.Buckets }},
	{"failure-ratio", func(b *breaker.Settings) any { return &b.FailureRatio }},
	{"min-attempts", func(b *breaker.Settings) any { return &b.MinAttempts }},
	{"consecutive", func(b *breaker.Settings) any { return &b.Consecutive }},
	{"cool-down", func(b *breaker.Settings) any { return &b.CoolDown }},
	{"max-cool-down", func(b *breaker.Settings) any { return &b.MaxCoolDown }},
	{"probes", func(b *breaker.Settings) any { return &b.Probes }},
	{"ramp-rate", func(b *breaker.Settings) any { return &b.RampRate }},
	{"ramp-growth", func(b *breaker.Settings) any { return &b.RampGrowth }},
	{"ramp-up", func(b *breaker.Settings) any { return &b.RampUp }},
}

// parseBreaker reads breaker settings as KEY=VALUE pairs, comma-separated
// (cool-down=1m,failure-ratio=0.3); keys not given mean breaker's
// defaults. gate.Protection checks them.
func parseBreaker(v string) (breaker.Settings, error) {
	var b breaker.Settings
	for _, pair := range strings.Split(v, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		key, val, _ := strings.Cut(pair, "=")
		if err := setBreakerKey(&b, strings.TrimSpace(key), strings.TrimSpace(val)); err != nil {
			return breaker.Settings{}, err
		}
	}
	if err := (gate.Protection{Breaker: b}).Validate(); err != nil {
		return breaker.Settings{}, err
	}
	return b, nil
}

func setBreakerKey(b *breaker.Settings, key, val string) error {
	var keys []string
	for _, k := range breakerKeys {
		keys = append(keys, k.key)
		if k.key != key {
			continue
		}
		switch p := k.field(b).(type) {
		case *time.Duration:
			d, err := time.ParseDuration(val)
			if err != nil {
				return fmt.Errorf("%s=%s: want a duration such as 30s", key, val)
			}
			*p = d
		case *int:
			n, err := strconv.Atoi(val)
			if err != nil {
				return fmt.Errorf("%s=%s: want a whole number such as 20", key, val)
			}
			*p = n
		case *float64:
			f, err := strconv.ParseFloat(val, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("%s=%s: want a number from 0 to 1 such as 0.5", key, val)
			}
			*p = f
		}
		return nil
	}
	return fmt.Errorf("%q: want KEY=VALUE pairs, comma-separated, with the keys %s (e.g. cool-down=1m,failure-ratio=0.3)", key, strings.Join(keys, ", "))
}

// engineConfig is the one place an engine's configuration is made from
// the settings: grit worker's, grit run's, and grit bench's, in its own
// process and in its worker processes. The caller adds what is its own:
// the queues, the run, the logger, OnEvent.
func (s settings) engineConfig(st store.Store) engine.Config {
	return engine.Config{
		Store: st, WorkerID: s.workerID, Concurrency: s.concurrency, Lease: s.lease, Heartbeat: s.heartbeat,
		Version: Version, Protection: s.protection, Alerting: s.alerting, Retention: s.retention,
		Schedules: s.schedules, AutoTimeouts: s.autoTimeouts, AllowExec: s.allowExec,
	}
}

// parseAllowExec reads --allow-exec: "" none, * all, or commands,
// comma-separated.
func parseAllowExec(v string) ([]string, error) {
	if v == "" {
		return nil, nil
	}
	var out []string
	for _, c := range strings.Split(v, ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			return nil, errors.New("an empty command: want * for every command, or commands separated by commas (e.g. /usr/bin/convert,backup.sh)")
		}
		out = append(out, c)
	}
	return out, nil
}

// args are the flags that give another grit process the same settings:
// those not at their default, wherever they came from.
func (s settings) args() []string {
	var out []string
	for _, k := range allKnobs() {
		if src, ok := s.sources[k.name]; ok && src != "default" {
			out = append(out, "--"+k.name+"="+s.values[k.name])
		}
	}
	return out
}

// durationKnob reads one duration knob on its own, for a command that has
// no other.
func (e *env) durationKnob(k knob, flag string) (time.Duration, error) {
	v, src := e.lookup(k, flag)
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, usageErr("%s %q (%s): want a positive duration such as %s", k.name, v, src, k.def)
	}
	return d, nil
}

// runEngine returns grit run's engine: it works the tasks of one run only,
// for it must not take the other tasks of a store it shares with workers
// and other runs, and logs warnings to stderr.
func (e *env) runEngine(st store.Store, run int64, s settings, onEvent func(engine.Event), tr *tracing.Tracer) (*engine.Engine, error) {
	cfg := s.engineConfig(st)
	cfg.Run, cfg.OnEvent, cfg.Tracer = run, onEvent, tr
	cfg.Logger = e.logger(slog.LevelWarn)
	return engine.Assemble(cfg, engine.Observe{})
}
