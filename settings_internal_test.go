package grit

import (
	"reflect"
	"slices"
	"testing"

	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/internal/gate"
)

// TestSettingsMirror: the root's settings types have every field of the
// internal types they are converted to, so a field added below is not
// silently out of the user's reach. (Isolation, AutoTimeouts and Attempt
// are converted by Go's struct conversion, which the compiler checks.)
func TestSettingsMirror(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ root, internal any }{
		{Protection{}, gate.Protection{}},
		{Alerting{}, alert.Alerting{}},
		{Alert{}, alert.Event{}},
	} {
		if got, want := fieldNames(tt.root), fieldNames(tt.internal); !slices.Equal(got, want) {
			t.Errorf("%T has fields %v; %T has %v", tt.root, got, tt.internal, want)
		}
	}
}

func fieldNames(v any) []string {
	rt := reflect.TypeOf(v)
	var out []string
	for i := range rt.NumField() {
		out = append(out, rt.Field(i).Name)
	}
	return out
}

// TestSettingsConvert: every field reaches the internal type.
func TestSettingsConvert(t *testing.T) {
	t.Parallel()
	p := Protection{PressureBase: 1, PressureMax: 2, RetryBudget: BudgetRates{0.5, 2, 3}, BudgetWait: 4, OutageTasks: 5, OutageWindow: 6}
	p.Breaker.MinAttempts = 7
	g := p.gate()
	if g.PressureBase != 1 || g.PressureMax != 2 || g.RetryBudget.Ratio != 0.5 || g.RetryBudget.Floor != 2 || g.RetryBudget.Burst != 3 ||
		g.BudgetWait != 4 || g.OutageTasks != 5 || g.OutageWindow != 6 || g.Breaker.MinAttempts != 7 {
		t.Errorf("gate() = %+v from %+v", g, p)
	}
	var got Alert
	a := Alerting{OnAlert: func(e Alert) { got = e }, AlertWebhook: "http://x", DashboardURL: "http://d"}.alert()
	a.OnAlert(alert.Event{Type: alert.OutageHeld, TaskID: 9, Tasks: 3, Schedule: "s", Link: "l"})
	if got.Type != AlertOutageHeld || got.TaskID != 9 || got.Tasks != 3 || got.Schedule != "s" || got.Link != "l" ||
		a.AlertWebhook != "http://x" || a.DashboardURL != "http://d" {
		t.Errorf("alert() gave %+v, %+v", got, a)
	}
	if (Alerting{}).alert().OnAlert != nil {
		t.Error("no OnAlert became one")
	}
}

// TestMetricsMirror: grit.Metrics has exactly gate.Metrics's methods. (The
// compiler checks that each of the gate's is in the root's; this checks
// that the root asks for none the engine never calls.)
func TestMetricsMirror(t *testing.T) {
	methods := func(rt reflect.Type) []string {
		var out []string
		for i := range rt.NumMethod() {
			out = append(out, rt.Method(i).Name+" "+rt.Method(i).Type.String())
		}
		return out
	}
	root, internal := methods(reflect.TypeFor[Metrics]()), methods(reflect.TypeFor[gate.Metrics]())
	if !slices.Equal(root, internal) {
		t.Errorf("grit.Metrics has %v; gate.Metrics has %v", root, internal)
	}
}
