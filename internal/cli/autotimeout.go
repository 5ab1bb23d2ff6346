package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/grit-run/grit/internal/autotimeout"
)

// knobAutoTimeout is how the engines of grit worker and grit run, and grit
// server for its remote workers, choose the timeout of a task that asks
// for an auto timeout.
var knobAutoTimeout = knob{"auto-timeout", "GRIT_AUTO_TIMEOUT",
	fmt.Sprintf("factor=%g,floor=1m,ceiling=1h,min-runs=%d,default=30m,refresh=1m", autotimeout.DefaultFactor, autotimeout.DefaultMinRuns),
	"how a task with timeout auto gets its timeout, as KEY=VALUE,…: factor × the p99 of its successful runs, within floor and ceiling, once it has min-runs of them, default before; refresh is how long a worker keeps a p99 (see docs/timeouts.md)",
	func(s *settings) any { return &s.autoTimeouts }}

// parseAutoTimeouts reads the knob's KEY=VALUE pairs; keys not given keep
// their defaults.
func parseAutoTimeouts(v string) (autotimeout.Settings, error) {
	var a autotimeout.Settings
	durs := map[string]*time.Duration{"floor": &a.Floor, "ceiling": &a.Ceiling, "default": &a.Default, "refresh": &a.Refresh}
	for _, pair := range strings.Split(v, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		key, val, _ := strings.Cut(pair, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch p, isDur := durs[key]; {
		case isDur:
			d, err := time.ParseDuration(val)
			if err != nil || d <= 0 {
				return a, fmt.Errorf("%s=%s: want a positive duration such as 1m", key, val)
			}
			*p = d
		case key == "factor":
			f, err := strconv.ParseFloat(val, 64)
			if err != nil || f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) {
				return a, fmt.Errorf("factor=%s: want a positive number such as 5", val)
			}
			a.Factor = f
		case key == "min-runs":
			n, err := strconv.Atoi(val)
			if err != nil || n <= 0 {
				return a, fmt.Errorf("min-runs=%s: want a positive whole number such as 20", val)
			}
			a.MinRuns = n
		default:
			return a, fmt.Errorf("%q: want KEY=VALUE pairs, comma-separated, with the keys factor, floor, ceiling, min-runs, default, refresh (e.g. factor=4,floor=30s)", key)
		}
	}
	return a, a.Validate()
}
