package rate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseRate reads a rate as N/s, N/m or N/h (calls a second, a minute or
// an hour; N may be a decimal): "5/s", "300/m". It returns calls a second.
func ParseRate(s string) (float64, error) {
	num, per, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return 0, fmt.Errorf("rate %q: want calls per second, minute or hour, as N/s, N/m or N/h (e.g. 5/s)", s)
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) || n <= 0 {
		return 0, fmt.Errorf("rate %q: %q is not a positive number of calls (e.g. 5/s)", s, num)
	}
	var div float64
	switch strings.TrimSpace(per) {
	case "s", "sec", "second":
		div = 1
	case "m", "min", "minute":
		div = 60
	case "h", "hour":
		div = 3600
	default:
		return 0, fmt.Errorf("rate %q: per %q: want s, m or h (e.g. 5/s, 300/m)", s, per)
	}
	r := n / div
	if r < 1.0/86400 || r > 1e9 {
		return 0, fmt.Errorf("rate %q: want from one call a day to a billion a second", s)
	}
	return r, nil
}
