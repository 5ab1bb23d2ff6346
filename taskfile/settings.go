package taskfile

import (
	"maps"
	"regexp"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// settingKeys are the keys a task shares with defaults, in the order the
// docs list them.
var settingKeys = []string{
	"retry", "timeout", "grace", "group", "queue", "tenant", "priority", "poison_after",
	"retry_on_exit", "permanent_on_exit", "resource_on_exit", "snooze_on_exit", "snooze", "max_snoozes", "env", "dir", "quarantine",
}

// settings are the keys of a task or of defaults; nil means not set.
type settings struct {
	policy      *retry.Policy
	timeout     *time.Duration
	grace       *time.Duration
	group       *string
	queue       *string
	tenant      *string
	dir         *string
	priority    *int
	poisonAfter *int
	snooze      *time.Duration
	maxSnoozes  *int
	exits       [numExitKinds]*exitList
	env         map[string]string // nil: not set
	quarantine  *task.ExecQuarantine
}

// setting reads kv into s; it returns false when kv's key is not a setting.
func (p *parser) setting(s *settings, kv pair) bool {
	v := kv.val
	switch key := kv.key.Value; key {
	case "retry":
		set(&s.policy)(p.policy(v))
	case "timeout":
		set(&s.timeout)(p.timeout(v))
	case "grace":
		set(&s.grace)(p.duration(key, v, "it is the time from SIGTERM to SIGKILL; leave it out for the default 5s"))
	case "group", "queue", "tenant":
		dst := map[string]**string{"group": &s.group, "queue": &s.queue, "tenant": &s.tenant}[key]
		set(dst)(p.name(key, v))
	case "dir":
		set(&s.dir)(p.dir(v))
	case "priority":
		set(&s.priority)(p.integer(key, v, -maxInt32, maxInt32, "a whole number; higher runs first"))
	case "poison_after":
		set(&s.poisonAfter)(p.integer(key, v, 1, maxInt32, "a whole number from 1: how many identical failures in a row make a task poison"))
	case "snooze":
		set(&s.snooze)(p.duration(key, v, "a snooze waits before the task runs again; leave snooze out for the default 1m"))
	case "max_snoozes":
		set(&s.maxSnoozes)(p.integer(key, v, 0, maxInt32, "a whole number from 0: how many times the task may snooze; 0 for no bound"))
	case "quarantine":
		set(&s.quarantine)(p.quarantine(v))
	case "env":
		if env, ok := p.env(v); ok {
			s.env = env
		}
	default:
		k, ok := exitKindOf(key)
		if !ok {
			return false
		}
		// Keep the good codes even when some are bad, so that a code listed
		// twice is reported along with the bad ones.
		s.exits[k] = p.exitList(k, v)
	}
	return true
}

// set returns a function that stores a parsed value in *dst when it parsed.
func set[T any](dst **T) func(T, bool) {
	return func(v T, ok bool) {
		if ok {
			*dst = &v
		}
	}
}

func (p *parser) dir(n *yaml.Node) (string, bool) {
	s, ok := p.text("dir", n, "a directory path")
	if ok && s == "" {
		p.errs.add(n.Line, "dir is empty (give a directory, or leave dir out for the worker's)")
		return "", false
	}
	return s, ok
}

// envNameRE is the rule for environment variable names.
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// env reads a mapping of variables. Scalar values of any type are kept as
// written (8080, true, 1.5); an empty value is "".
func (p *parser) env(n *yaml.Node) (map[string]string, bool) {
	if n.Kind != yaml.MappingNode {
		p.errs.add(n.Line, "env is %s (it takes a mapping of variables, e.g. {REGION: eu})", describe(n))
		return nil, false
	}
	env := make(map[string]string)
	ok := true
	for _, kv := range p.fields(n, "variable") {
		name, v := kv.key.Value, kv.val
		if !envNameRE.MatchString(name) {
			p.errs.add(kv.key.Line, "env variable %q is not a valid name (use letters, digits and _, not starting with a digit)", name)
			ok = false
			continue
		}
		if v.Kind == yaml.ScalarNode && isNull(v) {
			env[name] = ""
			continue
		}
		s, good := p.text("env variable "+name, v, "a string")
		env[name], ok = s, ok && good
	}
	return env, ok
}

// over returns s with every key it does not set taken from d: a task's
// settings over the defaults. Lists and the retry policy are replaced
// whole; env maps are merged, s winning.
func (s settings) over(d settings) settings {
	or(&s.policy, d.policy)
	or(&s.timeout, d.timeout)
	or(&s.grace, d.grace)
	or(&s.group, d.group)
	or(&s.queue, d.queue)
	or(&s.tenant, d.tenant)
	or(&s.dir, d.dir)
	or(&s.priority, d.priority)
	or(&s.poisonAfter, d.poisonAfter)
	or(&s.snooze, d.snooze)
	or(&s.maxSnoozes, d.maxSnoozes)
	or(&s.quarantine, d.quarantine)
	for k := range s.exits {
		or(&s.exits[k], d.exits[k])
	}
	if d.env != nil {
		env := maps.Clone(d.env)
		maps.Copy(env, s.env)
		s.env = env
	}
	return s
}

func or[T any](dst **T, def *T) {
	if *dst == nil {
		*dst = def
	}
}

// apply sets t's fields from s.
func (s settings) apply(t *Task) {
	if s.policy != nil {
		t.Policy, t.PolicySet = *s.policy, true
	}
	t.Timeout = val(s.timeout)
	t.Grace = val(s.grace)
	t.Group = val(s.group)
	t.Queue = val(s.queue)
	t.Tenant = val(s.tenant)
	t.Exec.Dir = val(s.dir)
	t.Priority = val(s.priority)
	t.PoisonAfter = val(s.poisonAfter)
	t.Exec.RetryOnExit = s.exits[exitRetry].get()
	t.Exec.PermanentOnExit = s.exits[exitPermanent].get()
	t.Exec.ResourceOnExit = s.exits[exitResource].get()
	t.Exec.SnoozeOnExit = s.exits[exitSnooze].get()
	if len(t.Exec.SnoozeOnExit) > 0 { // a default's snooze is nothing to a task that never snoozes
		t.Exec.Snooze, t.Exec.MaxSnoozes = val(s.snooze), val(s.maxSnoozes)
	}
	t.Exec.Quarantine = s.quarantine
	for _, k := range slices.Sorted(maps.Keys(s.env)) {
		t.Exec.Env = append(t.Exec.Env, k+"="+s.env[k])
	}
}

func val[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
