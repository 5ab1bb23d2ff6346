package taskfile

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/grit-run/grit/rate"
)

// Limit is a limit the file sets on a queue, kind, group or tenant, as
// grit limits set does: of running attempts (Max), of calls a second
// (Rate), or both. Submitting the file sets it in the store.
type Limit struct {
	Scope string     // queue, kind, group or tenant
	Name  string     // the queue's, kind's, group's or tenant's
	Max   int        // the most attempts running at once; 0: not set (a kind has none)
	Rate  rate.Limit // the most calls a second, and at once; a zero Rate: not set
	Line  int        // where the limit's key is written
}

// limitScopes are what a limit may be set on.
var limitScopes = []string{"queue", "kind", "group", "tenant"}

// limitKeys are a limit's keys, in the order the docs list them.
var limitKeys = []string{"max", "rate", "burst"}

// limits reads the limits mapping, in the file's order: keys are
// "SCOPE NAME" (tenant acme), values mappings of max, rate and burst.
func (p *parser) limits(n *yaml.Node) []Limit {
	if n.Kind != yaml.MappingNode {
		p.errs.add(n.Line, "limits is %s (it takes a mapping such as tenant acme: {rate: 5/s, burst: 10})", describe(n))
		return nil
	}
	var out []Limit
	for _, kv := range p.fields(n, "limit") {
		if l, ok := p.limit(kv); ok {
			out = append(out, l)
		}
	}
	return out
}

// limit reads one limit; ok when it has no problem.
func (p *parser) limit(kv pair) (Limit, bool) {
	l := Limit{Line: kv.key.Line}
	before := len(p.errs.errs)
	scope, name, _ := strings.Cut(strings.TrimSpace(kv.key.Value), " ")
	l.Scope, l.Name = scope, strings.TrimSpace(name)
	switch {
	case !slices.Contains(limitScopes, l.Scope) || l.Name == "":
		p.errs.add(kv.key.Line, "limit %q: want a scope and a name, the scope queue, kind, group or tenant (e.g. tenant acme: {rate: 5/s})", kv.key.Value)
	case !nameRE.MatchString(l.Name):
		p.errs.add(kv.key.Line, "limit %q: %q is not a valid name (%s)", kv.key.Value, l.Name, nameRule)
	}
	if kv.val.Kind != yaml.MappingNode {
		p.errs.add(kv.val.Line, "limit %q is %s (a limit is a mapping of max, rate and burst, e.g. {rate: 5/s, burst: 10})", kv.key.Value, describe(kv.val))
		return l, false
	}
	var burst *yaml.Node // set when burst is a number
	for _, f := range p.fields(kv.val, "key") {
		switch f.key.Value {
		case "max":
			l.Max, _ = p.integer("max", f.val, 1, maxInt32, "the most attempts running at once, a whole number from 1")
			if l.Scope == "kind" {
				p.errs.add(f.key.Line, "limit %q: a kind has no limit of running attempts, only a rate (e.g. rate: 5/s)", kv.key.Value)
			}
		case "rate":
			if s, ok := p.scalar("rate", f.val, "calls a second, minute or hour, e.g. 5/s or 300/m"); ok {
				r, err := rate.ParseRate(s)
				if err != nil {
					p.errs.add(f.val.Line, "limit %q: %v (write it as N/s, N/m or N/h)", kv.key.Value, err)
				}
				l.Rate.Rate = r
			}
		case "burst":
			var ok bool
			if l.Rate.Burst, ok = p.number("burst", f.val, "the most calls at once, e.g. 10"); ok {
				burst = f.val
			}
		default:
			p.unknownKey(f.key, limitKeys, nil, "a limit's keys")
		}
	}
	switch {
	case burst != nil && (l.Rate.Burst < 1 || l.Rate.Burst > 1e9):
		p.errs.add(burst.Line, "limit %q: burst %s is out of range (it takes a number of calls at once from 1 to a billion)", kv.key.Value, burst.Value)
	case burst != nil && l.Rate.Rate == 0 && len(p.errs.errs) == before:
		p.errs.add(burst.Line, "limit %q: burst goes with rate (add rate:, e.g. rate: 5/s)", kv.key.Value)
	}
	if l.Max == 0 && l.Rate.Rate == 0 && len(p.errs.errs) == before {
		p.errs.add(kv.key.Line, "limit %q sets nothing (give max:, rate: or both, e.g. {rate: 5/s})", kv.key.Value)
	}
	return l, len(p.errs.errs) == before
}
