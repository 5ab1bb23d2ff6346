package taskfile

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/grit-run/grit/retry"
)

var retryKeys = []string{"attempts", "min", "max", "multiplier", "jitter", "max_elapsed", "explicit_only",
	"transient", "unclassified", "after", "resource"}

// classKeys are the retry mapping's keys that give a class of failures its
// own schedule, written as in a policy string: never or
// [count,]min[,max][,jitter].
var classKeys = map[string]retry.Class{
	"transient": retry.ClassTransient, "unclassified": retry.Unclassified,
	"after": retry.ClassAfter, "resource": retry.ClassResource,
}

// retrySynonyms are names other engines give to the retry map's keys.
var retrySynonyms = map[string]string{
	"retries": "attempts", "max_attempts": "attempts", "count": "attempts", "tries": "attempts",
	"min_delay": "min", "initial": "min", "max_delay": "max", "factor": "multiplier",
}

const policyHint = `e.g. "10 5s 10m": 10 retries, from 5s doubling up to 10m; or never`

// policy reads a retry policy: a string in retry.Parse's grammar, or a
// mapping.
func (p *parser) policy(n *yaml.Node) (retry.Policy, bool) {
	switch {
	case n.Kind == yaml.MappingNode:
		return p.policyMap(n)
	case n.Kind != yaml.ScalarNode || isNull(n):
		p.errs.add(n.Line, "retry is %s (it takes a policy string, %s, or a mapping with attempts, min, max…)", describe(n), policyHint)
		return retry.Policy{}, false
	}
	pol, err := retry.Parse(n.Value)
	if err != nil {
		p.policyError(n, err)
		return retry.Policy{}, false
	}
	return pol, true
}

// policyError reports a retry.Parse error, with its own words.
func (p *parser) policyError(n *yaml.Node, err error) {
	var pe *retry.ParseError
	if !errors.As(err, &pe) {
		p.errs.add(n.Line, "retry %q: %v (%s)", n.Value, err, policyHint)
		return
	}
	var b strings.Builder
	b.WriteString("retry " + strconv.Quote(pe.Input))
	if pe.Part != "" {
		b.WriteString(": " + strconv.Quote(pe.Part))
	}
	b.WriteString(" " + pe.Msg)
	if !strings.HasSuffix(pe.Msg, ")") {
		b.WriteString(" (" + policyHint + ")")
	}
	p.errs.add(n.Line, "%s", b.String())
}

// retryMap holds the keys of a retry mapping; set has the value node of
// each key written.
type retryMap struct {
	attempts          int
	min, max, elapsed time.Duration
	multiplier        float64
	jitter            string
	explicitOnly      bool
	classes           map[retry.Class]retry.ClassPolicy
	set               map[string]*yaml.Node
}

func (p *parser) policyMap(n *yaml.Node) (retry.Policy, bool) {
	fields := p.fields(n, "key")
	if len(fields) == 0 {
		p.errs.add(n.Line, "retry is an empty mapping (set attempts, min, max…, or leave retry out)")
		return retry.Policy{}, false
	}
	m := retryMap{set: make(map[string]*yaml.Node)}
	ok := true
	for _, kv := range fields {
		ok = p.retryKey(&m, kv) && ok
	}
	pol, good := p.buildPolicy(m)
	return pol, ok && good
}

// retryKey reads one key of a retry mapping.
func (p *parser) retryKey(m *retryMap, kv pair) bool {
	v, ok := kv.val, false
	switch key := kv.key.Value; key {
	case "attempts":
		m.attempts, ok = p.integer(key, v, 0, maxAttempts, "the total of attempts, the first included, up to 1000000; 0 for no limit")
	case "min":
		m.min, ok = p.duration(key, v, "the first delay; e.g. 1s")
	case "max":
		m.max, ok = p.duration(key, v, "the longest delay; e.g. 30s")
	case "max_elapsed":
		m.elapsed, ok = p.duration(key, v, "a time budget for all attempts; e.g. 5m")
	case "multiplier":
		m.multiplier, ok = p.number(key, v, "a number from 1 to 1000")
		if ok && (m.multiplier < 1 || m.multiplier > 1000) {
			p.errs.add(v.Line, "multiplier %s is out of range (it takes a number from 1 to 1000)", v.Value)
			ok = false
		}
	case "jitter":
		m.jitter, ok = p.scalar(key, v, "full, equal, none or decorrelated")
		if ok && !slices.Contains(jitters, m.jitter) {
			p.errs.add(v.Line, "jitter %q is not a jitter (it takes full, equal, none or decorrelated)", m.jitter)
			ok = false
		}
	case "explicit_only":
		m.explicitOnly, ok = p.boolean(key, v)
	case "transient", "unclassified", "after", "resource":
		ok = p.classSchedule(m, key, v)
	default:
		p.unknownKey(kv.key, retryKeys, retrySynonyms, "a retry mapping's keys")
		return true
	}
	if ok {
		m.set[kv.key.Value] = v
	}
	return ok
}

// boolean reads true or false.
func (p *parser) boolean(key string, n *yaml.Node) (bool, bool) {
	s, ok := p.scalar(key, n, "true or false")
	if !ok {
		return false, false
	}
	var b bool
	if n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
		p.errs.add(n.Line, "%s %q is not true or false (it takes true or false)", key, s)
		return false, false
	}
	return b, true
}

// classSchedule reads a class's schedule, in the policy string's words
// (transient: 20,2s,5m), into m.classes.
func (p *parser) classSchedule(m *retryMap, key string, n *yaml.Node) bool {
	s, ok := p.scalar(key, n, "a schedule, e.g. 20,2s,5m or never")
	if !ok {
		return false
	}
	pol, err := retry.Parse("1s " + key + "=" + s)
	if err != nil {
		msg := err.Error()
		if pe := (*retry.ParseError)(nil); errors.As(err, &pe) {
			msg, _, _ = strings.Cut(pe.Msg, "; ")
			msg = strings.Replace(strings.TrimPrefix(msg, "has "), ", which ", " ", 1)
		}
		p.errs.add(n.Line, "%s %q: %s (it takes never or [count,]min[,max][,jitter], e.g. 20,2s,5m)", key, s, msg)
		return false
	}
	if m.classes == nil {
		m.classes = make(map[retry.Class]retry.ClassPolicy)
	}
	m.classes[classKeys[key]] = pol.Classes[classKeys[key]]
	return true
}

// maxAttempts keeps attempts within what a policy string can say.
const maxAttempts = 1_000_000

var jitters = []string{"full", "equal", "none", "decorrelated"}

// buildPolicy turns a retry mapping into a Policy. Without min and max the
// backoff is the engine's default; min alone is a constant backoff; max
// makes it exponential from min (1s when not set) up to max.
func (p *parser) buildPolicy(m retryMap) (retry.Policy, bool) {
	pol := retry.Policy{MaxAttempts: m.attempts, MaxElapsed: m.elapsed, ExplicitOnly: m.explicitOnly, Classes: m.classes}
	lo := m.min
	if m.set["min"] == nil {
		lo = time.Second
	}
	maxN := m.set["max"]
	ok := true
	for _, key := range []string{"multiplier", "jitter"} {
		if n := m.set[key]; n != nil && maxN == nil {
			p.errs.add(n.Line, "%s needs max (without max the backoff is a constant min: add max, e.g. max: 30s)", key)
			ok = false
		}
	}
	if n := m.set["multiplier"]; n != nil && m.jitter == "decorrelated" {
		p.errs.add(n.Line, "multiplier does not apply to jitter decorrelated (remove one of them)")
		ok = false
	}
	if n := m.set["unclassified"]; n != nil && m.explicitOnly {
		p.errs.add(n.Line, "unclassified has no effect with explicit_only, which stops an unmarked error at once (remove one of them)")
		ok = false
	}
	if maxN != nil && m.max < lo {
		p.errs.add(maxN.Line, "max %s is below min %s (max must be at least min)", retry.FormatDuration(m.max), retry.FormatDuration(lo))
		ok = false
	}
	switch {
	case !ok:
		return retry.Policy{}, false
	case maxN != nil && m.jitter == "decorrelated":
		pol.Backoff = retry.Decorrelated{Min: lo, Max: m.max}
	case maxN != nil:
		j, _ := retry.ParseJitter(cmp.Or(m.jitter, "full"))
		pol.Backoff = retry.Exponential{Min: lo, Max: m.max, Multiplier: m.multiplier, Jitter: j}
	case m.set["min"] != nil:
		pol.Backoff = retry.Constant{Interval: lo}
	}
	return pol, true
}
