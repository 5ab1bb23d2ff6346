package retry

import (
	"fmt"
	"math"
	"slices"
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
//	never [option ...]
//	[count] min [max] [option ...]
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
// Options come last. jitter=full|equal|none|decorrelated and
// multiplier=F (≥ 1, default 2) refine an exponential backoff; max_elapsed=D
// is a time budget for the whole work; explicit_only retries only errors
// marked retryable (Policy.ExplicitOnly). A class of failures can have its
// own schedule (Policy.Classes), written class=never or
// class=[count,]min[,max][,jitter] with the class one of transient,
// unclassified, after and resource:
//
//	5 1s 1m transient=20,2s,5m   transient failures: 20 retries from 2s up to 5m; others: 5 from 1s up to 1m
//	10 1s 1m unclassified=2,1s   an unmarked error: 2 retries, every 1s
//	never transient=5s           only transient failures are retried, every 5s without limit
//	3 1s explicit_only           only marked errors are retried: 3 times, every 1s
//
// A class's count is, as the policy's, compared with the attempt's number,
// which counts every attempt whatever its class, except resource's: a
// resource failure is a deferral, which uses no attempt, and resource=N
// allows N deferrals (DefaultMaxDeferrals without a resource schedule). Durations are Go durations
// (300ms, 5s, 1m30s, 2h). Policy.String writes a parsed policy back so that
// Parse gives the same Policy again.
func Parse(s string) (Policy, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return Policy{}, parseErr(s, "", "is empty")
	}
	pos, opts := splitOptions(fields)
	p, err := Never, error(nil)
	if len(pos) != 1 || !strings.EqualFold(pos[0], "never") {
		p, err = parseSchedule(s, pos)
	}
	if err == nil {
		p, err = applyOptions(s, p, opts)
	}
	if err != nil {
		return Policy{}, err
	}
	if p.MaxAttempts == 1 {
		p.Backoff = nil // never used: Parse("0 1s") is Parse("never")
	}
	return p, nil
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

// optExplicitOnly is the one option without a value.
const optExplicitOnly = "explicit_only"

// splitOptions separates the positional fields from the options, which
// must come last.
func splitOptions(fields []string) (pos, opts []string) {
	for i, f := range fields {
		if strings.Contains(f, "=") || f == optExplicitOnly {
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
		if p.MaxAttempts == 0 {
			return Policy{}, parseErr(s, "", "has no delay before its options")
		}
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
		if !strings.Contains(o, "=") && o != optExplicitOnly {
			return Policy{}, parseErr(s, o, "is not an option: the count and delays come first, options (key=value, explicit_only) last")
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
		case optExplicitOnly:
			if o != optExplicitOnly {
				err = parseErr(s, o, "takes no value: write explicit_only alone")
			}
			p.ExplicitOnly = true
		default:
			p, err = withClass(s, o, p, key, val)
		}
		if err != nil {
			return Policy{}, err
		}
	}
	if _, ok := p.Classes[Unclassified]; ok && p.ExplicitOnly {
		i := slices.IndexFunc(opts, func(o string) bool { return strings.HasPrefix(o, "unclassified=") })
		return Policy{}, parseErr(s, opts[i], "has no effect with explicit_only, which stops an unmarked error at once: remove one of them")
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
	if m == 2 {
		m = 0 // the default, as String writes it: no multiplier
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
// gives back the same schedule: attempts, backoff, max elapsed time,
// ExplicitOnly and Classes (a class's nil Backoff written as the one it
// keeps). For a Policy that Parse returned, Parse(p.String()) is p. Hooks,
// PoisonAfter, Resource and Rand are not part of the string. A Backoff of
// another type than Constant, Exponential and Decorrelated (or, for a
// class, an Exponential with a multiplier) is written as "custom", which
// Parse refuses.
func (p Policy) String() string {
	var b strings.Builder
	if p.MaxAttempts == 1 {
		b.WriteString("never")
	} else {
		if p.MaxAttempts > 1 {
			b.WriteString(strconv.Itoa(p.MaxAttempts - 1))
			b.WriteByte(' ')
		}
		writeBackoff(&b, orDefault(p.Backoff, defaultBackoff))
	}
	if p.MaxElapsed > 0 {
		b.WriteString(" max_elapsed=")
		b.WriteString(FormatDuration(p.MaxElapsed))
	}
	if p.ExplicitOnly {
		b.WriteString(" " + optExplicitOnly)
	}
	writeClasses(&b, p)
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
