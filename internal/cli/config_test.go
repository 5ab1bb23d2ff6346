package cli

import (
	"encoding/json"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/gate"
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
	s, err := e.settings(cmd.Flags())
	return s, cmd, err
}

func TestSettingsSources(t *testing.T) {
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
		{[]string{"--breaker", "failure-ratio=2"}, `breaker "failure-ratio=2" (flag --breaker): breaker: failure ratio 2: want a number from 0 to 1`},
		{[]string{"--breaker", "cool-down=1h"}, "max cool-down 10m0s is shorter than the cool-down 1h0m0s"},
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
		if err := (gate.Protection{Breaker: b}).Validate(); err != nil || math.IsNaN(b.FailureRatio) || math.IsNaN(b.RampStart) {
			t.Errorf("%q: accepted %+v (%v)", s, b, err)
		}
	})
}

// TestConfigListsEveryKnob: grit config --json has a row for every knob,
// with the flags it was given.
func TestConfigListsEveryKnob(t *testing.T) {
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
