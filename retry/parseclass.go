package retry

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// classHint is shown in the errors of a class's schedule.
const classHint = `a class's schedule is never or [count,]min[,max][,jitter], e.g. transient=20,2s,5m`

// classKeys are the classes a policy string can give a schedule, in the
// order String writes them.
var classKeys = [...]struct {
	name  string
	class Class
}{
	{"transient", ClassTransient},
	{"unclassified", Unclassified},
	{"after", ClassAfter},
	{"resource", ClassResource},
}

// withClass applies the option key=val, which must be a class's schedule.
func withClass(s, opt string, p Policy, key, val string) (Policy, error) {
	for _, k := range classKeys {
		if k.name != key {
			continue
		}
		cp, err := parseClass(s, opt, val)
		if err != nil {
			return Policy{}, err
		}
		classes := make(map[Class]ClassPolicy, len(p.Classes)+1)
		for c, v := range p.Classes {
			classes[c] = v
		}
		classes[k.class] = cp
		p.Classes = classes
		return p, nil
	}
	return Policy{}, parseErr(s, opt, "is not an option (jitter=, multiplier=, max_elapsed=, explicit_only, "+
		"or a class's schedule: transient=, unclassified=, after=, resource=)")
}

// parseClass reads never or [count,]min[,max][,jitter].
func parseClass(s, opt, val string) (ClassPolicy, error) {
	if strings.EqualFold(val, "never") {
		return ClassPolicy{MaxAttempts: 1}, nil
	}
	if val == "" {
		return ClassPolicy{}, parseErr(s, opt, "has no schedule ("+classHint+")")
	}
	parts := strings.Split(val, ",")
	jitter := ""
	if last := parts[len(parts)-1]; isJitterWord(last) {
		jitter, parts = last, parts[:len(parts)-1]
	}
	sched, err := parseSchedule(s, parts)
	if err != nil {
		return ClassPolicy{}, classErr(s, opt, err)
	}
	cp := ClassPolicy{MaxAttempts: sched.MaxAttempts, Backoff: sched.Backoff}
	if jitter != "" {
		if cp.Backoff, err = withJitter(s, opt, cp.Backoff, jitter); err != nil {
			return ClassPolicy{}, parseErr(s, opt, "needs a min and a max delay before its jitter ("+classHint+")")
		}
	}
	if cp.MaxAttempts == 1 {
		cp.Backoff = nil // never used: transient=0,1s is transient=never
	}
	return cp, nil
}

func isJitterWord(w string) bool {
	switch w {
	case "full", "equal", "none", "decorrelated":
		return true
	}
	return false
}

// classErr turns an error about a part of a class's schedule into one about
// the option, which names the class.
func classErr(s, opt string, err error) error {
	var pe *ParseError
	if !errors.As(err, &pe) {
		return err
	}
	msg := pe.Msg
	switch {
	case pe.Part != "":
		msg = fmt.Sprintf("has %q, which %s", pe.Part, pe.Msg)
	case !strings.Contains(msg, "after its count"):
		msg = "has no delay" // "before its options" is about the policy's fields
	}
	return parseErr(s, opt, msg+"; "+classHint)
}

// writeClasses writes p.Classes as Parse reads them.
func writeClasses(b *strings.Builder, p Policy) {
	for _, k := range classKeys {
		cp, ok := p.Classes[k.class]
		if !ok {
			continue
		}
		b.WriteString(" " + k.name + "=")
		if cp.MaxAttempts == 1 {
			b.WriteString("never")
			continue
		}
		if cp.MaxAttempts > 1 {
			b.WriteString(strconv.Itoa(cp.MaxAttempts-1) + ",")
		}
		bo := cp.Backoff
		if bo == nil {
			bo = p.forClass(TaskError, k.class).Backoff
		}
		writeClassBackoff(b, bo)
	}
}

// writeClassBackoff writes a class's backoff: min[,max][,jitter]. One that
// the grammar cannot say (a multiplier, another type) is "custom", which
// Parse refuses.
func writeClassBackoff(b *strings.Builder, bo Backoff) {
	var s strings.Builder
	switch v := bo.(type) {
	case Exponential:
		if v.Multiplier != 0 && v.Multiplier != 2 {
			b.WriteString("custom")
			return
		}
		writeBackoff(&s, v)
	case Constant, Decorrelated:
		writeBackoff(&s, v)
	default:
		b.WriteString("custom")
		return
	}
	out := strings.Replace(s.String(), " jitter=", " ", 1)
	b.WriteString(strings.ReplaceAll(out, " ", ","))
}
