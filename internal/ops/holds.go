package ops

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/store"
)

// Hold is why the work of a group, or of a kind held as an outage, waits
// now: for a probe of its breaker, for its ramp after one closed, or for
// its resource pressure to ease.
type Hold struct {
	Group string `json:"group,omitempty"` // the group, or
	Kind  string `json:"kind,omitempty"`  // the kind without a group held as an outage
	// Wait is what the work waits for: WaitProbe, WaitRamp or WaitPressure.
	Wait string `json:"wait"`
	// Until is when the next probe may go, or the pressure ends; zero for
	// a ramp.
	Until time.Time `json:"until,omitzero"`
	// Rate is the calls a second a ramp lets through now.
	Rate float64 `json:"rate,omitempty"`
	// Why is the outage's error, if the hold is one.
	Why string `json:"why,omitempty"`
}

// What work waits for, in Hold.Wait.
const (
	WaitProbe    = "probe"
	WaitRamp     = "ramp"
	WaitPressure = "pressure"
)

// Holds are the holds among the store's groups at now, by name. A ramp
// is told from the group's own breaker settings, or the defaults: a
// fleet whose workers set another ramp-up may end it sooner or later.
func Holds(groups map[string]store.Group, now time.Time) []Hold {
	out := []Hold{}
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		if h, ok := HoldOf(name, groups[name], now); ok {
			out = append(out, h)
		}
	}
	return out
}

// HoldOf is the hold of the group name at now, if its work waits.
func HoldOf(name string, g store.Group, now time.Time) (Hold, bool) {
	var h Hold
	if k, ok := strings.CutPrefix(name, store.KindHold); ok {
		h.Kind = k
	} else {
		h.Group = name
	}
	if g.Outage != nil {
		h.Why = g.Outage.Error
	}
	var s breaker.Settings
	if g.Settings != nil {
		s = *g.Settings
	}
	c := g.Circuit
	switch {
	case c.State == breaker.Open || c.State == breaker.HalfOpen:
		h.Wait, h.Until = WaitProbe, c.NextProbe()
		if c.State == breaker.HalfOpen {
			h.Until = now // probes are out
		}
	case now.Before(g.Pressure.Until):
		h.Wait, h.Until = WaitPressure, g.Pressure.Until
	case s.Ramping(c, now):
		h.Wait, h.Rate, h.Why = WaitRamp, c.Ramp.Rate, ""
	default:
		return h, false
	}
	return h, true
}

// String says it in a line, for people.
func (h Hold) String() string {
	what := "group " + h.Group
	if h.Kind != "" {
		what = "kind " + h.Kind
	}
	var s string
	switch h.Wait {
	case WaitProbe:
		s = fmt.Sprintf("%s waits for a probe of its downstream (next %s)", what, h.Until.Local().Format(time.TimeOnly))
	case WaitPressure:
		s = fmt.Sprintf("%s waits for its downstream's resource pressure to ease (until %s)", what, h.Until.Local().Format(time.TimeOnly))
	case WaitRamp:
		s = fmt.Sprintf("%s ramps up after its breaker closed: %.3g calls a second, growing with each success", what, h.Rate)
	}
	if h.Why != "" {
		s += fmt.Sprintf(": held as an outage of %q", clip(h.Why, 120))
	}
	return s
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
