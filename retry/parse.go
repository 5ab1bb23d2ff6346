package retry

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// policyExample is shown in every Parse error, so a user sees a correct
// string beside the wrong one.
const policyExample = `e.g. "10 5s 10m": 10 retries, from 5s doubling up to 10m`

// maxRetries bounds the count of a policy string; past it, use no count.
const maxRetries = 1_000_000

// Parse reads a policy string in the grammar
//
//	never
//	[count] min [max] [option=value ...]
//
// count is the number of retries (so count+1 attempts); without it the work
// is retried without limit. min alone is a constant interval; min and max are
// an exponential backoff from min up to max with full jitter. Examples:
//
//	5s          every 5s, without limit
//	5s 10m      exponential from 5s up to 10m: 5s, 10s, 20s … 10m (jittered)
//	10 5s       10 retries, every 5s
//	10 5s 10m   10 retries, exponential from 5s up to 10m
//
// Options refine an exponential backoff and the budget:
// jitter=full|equal|none|decorrelated, multiplier=F (≥ 1, default 2),
// max_elapsed=D (a time budget for the whole work).
// Durations are Go durations (300ms, 5s, 1m30s, 2h).
func Parse(s string) (Policy, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return Policy{}, parseErr(s, "", "is empty")
	}
	if len(fields) == 1 && strings.EqualFold(fields[0], "never") {
		return Never, nil
	}
	pos, opts := splitOptions(fields)
	p, err := parseSchedule(s, pos)
	if err != nil {
		return Policy{}, err
	}
	return applyOptions(s, p, opts)
}

// MustParse is Parse for policies known when the program is written; it
// panics on a bad string.
func MustParse(s string) Policy {
	p, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return p
}

// splitOptions separates the positional fields from the key=value options,
// which must come last.
func splitOptions(fields []string) (pos, opts []string) {
	for i, f := range fields {
		if strings.Contains(f, "=") {
			return fields[:i], fields[i:]
		}
	}
	return fields, nil
}

func parseSchedule(s string, pos []string) (Policy, error) {
	var p Policy
	if len(pos) > 0 {
		if n, ok, err := parseCount(s, pos[0]); err != nil {
			return Policy{}, err
		} else if ok {
			p.MaxAttempts = n + 1
			pos = pos[1:]
		}
	}
	switch len(pos) {
	case 0:
		return Policy{}, parseErr(s, "", "has no delay after its count")
	case 1, 2:
	default:
		return Policy{}, parseErr(s, pos[2], "is one field too many")
	}
	lo, err := parseDelay(s, pos[0])
	if err != nil {
		return Policy{}, err
	}
	if len(pos) == 1 {
		p.Backoff = Constant{Interval: lo}
		return p, nil
	}
	hi, err := parseDelay(s, pos[1])
	if err != nil {
		return Policy{}, err
	}
	if hi < lo {
		return Policy{}, parseErr(s, pos[1], fmt.Sprintf("is below the minimum %s: the maximum comes second", pos[0]))
	}
	p.Backoff = Exponential{Min: lo, Max: hi}
	return p, nil
}

// parseCount reads a retry count; ok is false when f is not a number at all
// (it is then the minimum delay).
func parseCount(s, f string) (int, bool, error) {
	if f == "" || strings.Trim(f, "0123456789+-") != "" {
		return 0, false, nil
	}
	n, err := strconv.Atoi(f)
	if err != nil || n < 0 || n > maxRetries {
		return 0, false, parseErr(s, f, fmt.Sprintf("is not a retry count (0 to %d)", maxRetries))
	}
	return n, true, nil
}

func parseDelay(s, f string) (time.Duration, error) {
	d, err := time.ParseDuration(f)
	if err != nil {
		return 0, parseErr(s, f, "is not a duration (e.g. 300ms, 5s, 2m)")
	}
	if d <= 0 {
		return 0, parseErr(s, f, "must be longer than zero")
	}
	return d, nil
}

func applyOptions(s string, p Policy, opts []string) (Policy, error) {
	for _, o := range opts {
		if !strings.Contains(o, "=") {
			return Policy{}, parseErr(s, o, "is not an option: the count and delays come first, options (key=value) last")
		}
	}
	for _, o := range opts {
		key, val, _ := strings.Cut(o, "=")
		var err error
		switch key {
		case "jitter":
			p.Backoff, err = withJitter(s, o, p.Backoff, val)
		case "multiplier":
			p.Backoff, err = withMultiplier(s, o, p.Backoff, val)
		case "max_elapsed":
			p.MaxElapsed, err = parseDelay(s, val)
		default:
			err = parseErr(s, o, "is not an option (jitter=, multiplier=, max_elapsed=)")
		}
		if err != nil {
			return Policy{}, err
		}
	}
	return p, nil
}

func withJitter(s, opt string, b Backoff, val string) (Backoff, error) {
	e, ok := b.(Exponential)
	if !ok {
		return nil, parseErr(s, opt, "needs a min and a max delay before it")
	}
	if val == "decorrelated" {
		if e.Multiplier != 0 {
			return nil, parseErr(s, opt, "does not take a multiplier")
		}
		return Decorrelated{Min: e.Min, Max: e.Max}, nil
	}
	j, err := ParseJitter(val)
	if err != nil {
		return nil, parseErr(s, opt, "is not a jitter: want full, equal, none or decorrelated")
	}
	e.Jitter = j
	return e, nil
}

func withMultiplier(s, opt string, b Backoff, val string) (Backoff, error) {
	e, ok := b.(Exponential)
	if !ok {
		return nil, parseErr(s, opt, "needs a min and a max delay before it, and comes before any jitter=decorrelated")
	}
	m, err := strconv.ParseFloat(val, 64)
	if err != nil || m < 1 || m > 1000 || math.IsNaN(m) {
		return nil, parseErr(s, opt, "is not a multiplier from 1 to 1000")
	}
	e.Multiplier = m
	return e, nil
}

// ParseError is the error Parse returns.
type ParseError struct {
	Input string // the whole policy string
	Part  string // the part that is wrong, "" for the whole
	Msg   string
}

func (e *ParseError) Error() string {
	if e.Part == "" {
		return fmt.Sprintf("retry policy %q %s (%s, or never)", e.Input, e.Msg, policyExample)
	}
	return fmt.Sprintf("retry policy %q: %q %s (%s)", e.Input, e.Part, e.Msg, policyExample)
}

func parseErr(s, part, msg string) error {
	return &ParseError{Input: s, Part: part, Msg: msg}
}

// String writes the policy in Parse's grammar, so that Parse(p.String())
// gives back the same schedule: attempts, backoff and max elapsed time.
// Hooks, ExplicitOnly, PoisonAfter, Resource and Rand are not part of the
// string. A Backoff of another type than Constant, Exponential and
// Decorrelated is written as "custom", which Parse refuses.
func (p Policy) String() string {
	if p.MaxAttempts == 1 {
		return "never"
	}
	var b strings.Builder
	if p.MaxAttempts > 1 {
		b.WriteString(strconv.Itoa(p.MaxAttempts - 1))
		b.WriteByte(' ')
	}
	writeBackoff(&b, orDefault(p.Backoff, defaultBackoff))
	if p.MaxElapsed > 0 {
		b.WriteString(" max_elapsed=")
		b.WriteString(FormatDuration(p.MaxElapsed))
	}
	return b.String()
}

func writeBackoff(b *strings.Builder, bo Backoff) {
	switch v := bo.(type) {
	case Constant:
		b.WriteString(FormatDuration(v.Interval))
	case Exponential:
		lo, hi := v.Min, v.Max
		if lo <= 0 {
			lo = time.Second
		}
		if hi <= 0 {
			hi = math.MaxInt64
		}
		fmt.Fprintf(b, "%s %s", FormatDuration(lo), FormatDuration(max(hi, lo)))
		if v.Multiplier != 0 && v.Multiplier != 2 {
			fmt.Fprintf(b, " multiplier=%s", strconv.FormatFloat(v.Multiplier, 'g', -1, 64))
		}
		if v.Jitter != JitterFull {
			fmt.Fprintf(b, " jitter=%s", v.Jitter)
		}
	case Decorrelated:
		lo, hi := v.Min, v.Max
		if lo <= 0 {
			lo = time.Second
		}
		if hi <= 0 {
			hi = math.MaxInt64
		}
		fmt.Fprintf(b, "%s %s jitter=decorrelated", FormatDuration(lo), FormatDuration(max(hi, lo)))
	default:
		b.WriteString("custom")
	}
}

// FormatDuration writes d as Parse reads it, without the zero units that
// time.Duration.String adds: 10m, not 10m0s.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
