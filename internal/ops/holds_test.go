package ops

import (
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/store"
)

func TestHolds(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	var s breaker.Settings
	open, ramping, pressed := store.Group{}, store.Group{}, store.Group{}
	s.Trip(&open.Circuit, now, 0)
	open.Outage = &store.Outage{Error: "connect: connection refused", Kind: "sync"}
	s.Trip(&ramping.Circuit, now.Add(-time.Minute), 0)
	s.Close(&ramping.Circuit, now.Add(-time.Second))
	pressed.Pressure.Until = now.Add(time.Minute)
	got := Holds(map[string]store.Group{"kind:sync": open, "api": ramping, "disk": pressed, "calm": {}}, now)
	want := []struct{ group, kind, wait, says string }{
		{"api", "", WaitRamp, "group api ramps up after its breaker closed: 10 calls a second"},
		{"disk", "", WaitPressure, "group disk waits for its downstream's resource pressure to ease"},
		{"", "sync", WaitProbe, `kind sync waits for a probe of its downstream (next ` + now.Add(time.Second).Local().Format(time.TimeOnly) + `): held as an outage of "connect: connection refused"`},
	}
	if len(got) != len(want) {
		t.Fatalf("holds %+v, want %d", got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Group != w.group || g.Kind != w.kind || g.Wait != w.wait || !strings.Contains(g.String(), w.says) {
			t.Errorf("hold %d: %+v (%q), want %s %s waiting for %s, saying %q", i, g, g, w.group, w.kind, w.wait, w.says)
		}
	}
	if _, ok := HoldOf("api", ramping, now.Add(time.Hour)); ok {
		t.Error("a ramp an hour after closing still holds")
	}
}
