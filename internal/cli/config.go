package cli

import (
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/store"
)

// knob is one setting a deployment tunes: a flag value if given, else its
// GRIT_* environment variable, else the default.
type knob struct {
	name, env, def, help string
}

// The worker's knobs, shared by grit run and grit worker.
var (
	knobConcurrency = knob{"concurrency", "GRIT_CONCURRENCY", "10", "attempts running at once"}
	knobLease       = knob{"lease", "GRIT_LEASE", "15s", "how long a claim holds a task without a heartbeat"}
	knobHeartbeat   = knob{"heartbeat", "GRIT_HEARTBEAT", "5s", "how often leases are renewed; default a third of the lease"}
	knobDrain       = knob{"drain", "GRIT_DRAIN", "30s", "how long a stopping worker lets running attempts finish"}
	knobWorkerID    = knob{"worker-id", "GRIT_WORKER_ID", "", "the worker's identity; a worker restarted under the same one releases its predecessor's tasks at once (default host-pid-random)"}
	knobPressBase   = knob{"pressure-base", "GRIT_PRESSURE_BASE", "1s", "how long a resource failure first holds its group back; each further one doubles it"}
	knobPressMax    = knob{"pressure-max", "GRIT_PRESSURE_MAX", "1m", "the longest a group's resource pressure holds it back"}
	knobBudget      = knob{"retry-budget", "GRIT_RETRY_BUDGET", "0.2,1,10", "each group's retries, fleet-wide: RATIO of first attempts, FLOOR a second beyond it, BURST at most at once"}
)

// workerKnobs are the worker's knobs, in the order grit config lists them.
var workerKnobs = []knob{knobWorkerID, knobConcurrency, knobLease, knobHeartbeat, knobDrain, knobPressBase, knobPressMax, knobBudget}

// parseBudget reads a retry budget: RATIO,FLOOR,BURST.
func parseBudget(s string) (store.BudgetRates, error) {
	parts := strings.Split(s, ",")
	var v [3]float64
	ok := len(parts) == 3
	for i := 0; ok && i < 3; i++ {
		f, err := strconv.ParseFloat(strings.TrimSpace(parts[i]), 64)
		ok = err == nil && f >= 0 && !math.IsInf(f, 0)
		v[i] = f
	}
	if !ok || v[2] < 1 {
		return store.BudgetRates{}, fmt.Errorf("%q: want RATIO,FLOOR,BURST, such as 0.2,1,10: retries may be RATIO of first attempts plus FLOOR a second, BURST (1 or more) at once", s)
	}
	return store.BudgetRates{Ratio: v[0], Floor: v[1], Burst: v[2]}, nil
}

// lookup returns the knob's value and where it came from.
func (e *env) lookup(k knob, flag string) (string, string) {
	if flag != "" {
		return flag, "flag --" + k.name
	}
	if v := e.getenv(k.env); v != "" {
		return v, "env " + k.env
	}
	return k.def, "default"
}

func (e *env) durationKnob(k knob, flag string) (time.Duration, error) {
	v, src := e.lookup(k, flag)
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, usageErr("%s %q (%s): want a positive duration such as %s", k.name, v, src, k.def)
	}
	return d, nil
}

// heartbeat defaults to a third of the lease, so that a lease set alone
// stays consistent.
func (e *env) heartbeat(flag string, lease time.Duration) (time.Duration, error) {
	if _, src := e.lookup(knobHeartbeat, flag); src == "default" {
		return lease / 3, nil
	}
	return e.durationKnob(knobHeartbeat, flag)
}

func (e *env) intKnob(k knob, flag string) (int, error) {
	v, src := e.lookup(k, flag)
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, usageErr("%s %q (%s): want a positive number such as %s", k.name, v, src, k.def)
	}
	return n, nil
}

// workerSettings are the knobs an engine runs with.
type workerSettings struct {
	id                        string
	concurrency               int
	lease, heartbeat          time.Duration
	drain                     time.Duration
	pressureBase, pressureMax time.Duration
	budget                    store.BudgetRates
}

// workerFlags holds the flag values as given (empty: not given).
type workerFlags struct {
	id, concurrency, lease, heartbeat, drain string
	pressureBase, pressureMax, budget        string
}

func (e *env) workerSettings(f workerFlags) (workerSettings, error) {
	var s workerSettings
	var err error
	s.id, _ = e.lookup(knobWorkerID, f.id)
	if s.concurrency, err = e.intKnob(knobConcurrency, f.concurrency); err != nil {
		return s, err
	}
	if s.lease, err = e.durationKnob(knobLease, f.lease); err != nil {
		return s, err
	}
	if s.heartbeat, err = e.heartbeat(f.heartbeat, s.lease); err != nil {
		return s, err
	}
	if s.drain, err = e.durationKnob(knobDrain, f.drain); err != nil {
		return s, err
	}
	if s.heartbeat >= s.lease {
		return s, usageErr("heartbeat %v must be shorter than the lease %v (a third of it is usual)", s.heartbeat, s.lease)
	}
	s.pressureBase, s.pressureMax, s.budget, err = e.protection(f)
	return s, err
}

// protection reads the downstream protection's knobs: resource pressure
// and the groups' retry budget.
func (e *env) protection(f workerFlags) (base, max time.Duration, budget store.BudgetRates, err error) {
	if base, err = e.durationKnob(knobPressBase, f.pressureBase); err != nil {
		return
	}
	if max, err = e.durationKnob(knobPressMax, f.pressureMax); err != nil {
		return
	}
	if max < base {
		err = usageErr("pressure-max %v must be at least pressure-base %v", max, base)
		return
	}
	v, src := e.lookup(knobBudget, f.budget)
	if budget, err = parseBudget(v); err != nil {
		err = usageErr("retry-budget (%s): %v", src, err)
	}
	return
}

func (f *workerFlags) register(fs interface {
	StringVar(p *string, name, value, usage string)
}) {
	for _, k := range []struct {
		p *string
		k knob
	}{{&f.concurrency, knobConcurrency}, {&f.lease, knobLease}, {&f.heartbeat, knobHeartbeat}, {&f.drain, knobDrain}, {&f.id, knobWorkerID},
		{&f.pressureBase, knobPressBase}, {&f.pressureMax, knobPressMax}, {&f.budget, knobBudget}} {
		usage := fmt.Sprintf("%s (env %s, default %s)", k.k.help, k.k.env, k.k.def)
		if k.k.def == "" {
			usage = fmt.Sprintf("%s (env %s)", k.k.help, k.k.env)
		}
		fs.StringVar(k.p, k.k.name, "", usage)
	}
}

// runEngine returns grit run's engine: it works the tasks of one run only,
// for it must not take the other tasks of a store it shares with workers
// and other runs, and logs warnings to stderr.
func (e *env) runEngine(st store.Store, run int64, ws workerSettings, onEvent func(engine.Event)) (*engine.Engine, error) {
	return engine.New(engine.Config{
		Store: st, Run: run, WorkerID: ws.id, Concurrency: ws.concurrency, Lease: ws.lease, Heartbeat: ws.heartbeat,
		Protection: gate.Protection{PressureBase: ws.pressureBase, PressureMax: ws.pressureMax, RetryBudget: ws.budget},
		OnEvent:    onEvent, Version: Version,
		Logger: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
}
