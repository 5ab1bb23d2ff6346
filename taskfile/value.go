package taskfile

import (
	"math"
	"regexp"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/grit-run/grit/task"
)

// parser turns the YAML nodes of one file into a File, collecting every
// problem on the way.
type parser struct {
	errs    errList
	merging map[*yaml.Node]bool   // mappings being merged, to refuse a mapping that merges itself
	read    map[*yaml.Node][]pair // the fields of each mapping read
}

// scalar returns the text of a scalar value; want says what the key takes,
// for the message when n is a list, a mapping or empty.
func (p *parser) scalar(key string, n *yaml.Node, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		p.errs.add(n.Line, "%s is %s (it takes %s)", key, describe(n), want)
		return "", false
	}
	return n.Value, true
}

// duration reads a Go duration. zero is the hint when zero is refused, or ""
// when zero is allowed.
func (p *parser) duration(key string, n *yaml.Node, zero string) (time.Duration, bool) {
	s, ok := p.scalar(key, n, "a duration, e.g. 30s or 2m")
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		hint := "e.g. 300ms, 30s, 2m, 1h30m"
		if strings.Trim(s, "0123456789.") == "" {
			hint = "a number needs a unit: 30s, not 30"
		}
		if key == "timeout" {
			hint += ", or auto"
		}
		p.errs.add(n.Line, "%s %q is not a duration (%s)", key, s, hint)
	case d < 0:
		p.errs.add(n.Line, "%s %q is negative (give a duration above zero, e.g. 30s)", key, s)
	case d == 0 && zero != "":
		p.errs.add(n.Line, "%s %q must be longer than zero (%s)", key, s, zero)
	default:
		return d, true
	}
	return 0, false
}

// timeout reads a timeout: a duration, or auto (task.AutoTimeout), a
// timeout learned from the task's successful runs.
func (p *parser) timeout(n *yaml.Node) (time.Duration, bool) {
	if n.Kind == yaml.ScalarNode && strings.EqualFold(n.Value, "auto") {
		return task.AutoTimeout, true
	}
	return p.duration("timeout", n, "")
}

// integer reads a whole number from lo to hi; want describes the range.
func (p *parser) integer(key string, n *yaml.Node, lo, hi int, want string) (int, bool) {
	s, ok := p.scalar(key, n, want)
	if !ok {
		return 0, false
	}
	var i int64
	if n.ShortTag() != "!!int" || n.Decode(&i) != nil {
		p.errs.add(n.Line, "%s %q is not a whole number (it takes %s)", key, s, want)
		return 0, false
	}
	if i < int64(lo) || i > int64(hi) {
		p.errs.add(n.Line, "%s %s is out of range (it takes %s)", key, s, want)
		return 0, false
	}
	return int(i), true
}

// number reads a number (an integer or a float).
func (p *parser) number(key string, n *yaml.Node, want string) (float64, bool) {
	s, ok := p.scalar(key, n, want)
	if !ok {
		return 0, false
	}
	var f float64
	if t := n.ShortTag(); (t != "!!int" && t != "!!float") || n.Decode(&f) != nil || math.IsNaN(f) {
		p.errs.add(n.Line, "%s %q is not a number (it takes %s)", key, s, want)
		return 0, false
	}
	return f, true
}

// maxInt32 bounds integers that a store keeps in a 32-bit column.
const maxInt32 = math.MaxInt32

// nameRE is the rule for task, queue and group names.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

const nameRule = "use letters, digits, _, . and -, starting with a letter or digit, at most 128 characters"

// name reads a task, queue or group name.
func (p *parser) name(key string, n *yaml.Node) (string, bool) {
	s, ok := p.scalar(key, n, "a name such as payments-api")
	if !ok {
		return "", false
	}
	if !nameRE.MatchString(s) {
		p.errs.add(n.Line, "%s %q is not a valid name (%s)", key, s, nameRule)
		return "", false
	}
	return s, true
}

// runNameProblem says what is wrong with a run's name, or "".
func runNameProblem(s string) string {
	switch {
	case strings.TrimSpace(s) == "":
		return "is blank"
	case len(s) > 128:
		return "is longer than 128 bytes"
	case strings.ContainsFunc(s, unicode.IsControl):
		return "holds a control character (a line break, a tab…)"
	}
	return ""
}

// text reads a string for a process: it cannot hold a NUL byte.
func (p *parser) text(key string, n *yaml.Node, want string) (string, bool) {
	s, ok := p.scalar(key, n, want)
	if ok && strings.ContainsRune(s, 0) {
		p.errs.add(n.Line, "%s holds a NUL byte (a process cannot receive one: remove it)", key)
		return "", false
	}
	return s, ok
}
