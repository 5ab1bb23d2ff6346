package taskfile

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/grit-run/grit/internal/suggest"
	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/task"
)

// scheduleKeys are a schedule's keys, in the order the docs list them.
var scheduleKeys = []string{"task", "cron", "every", "zone", "jitter", "overlap", "catch_up", "pause_after"}

// scheduleSynonyms are keys other schedulers use for a schedule's keys.
var scheduleSynonyms = map[string]string{
	"schedule": "cron", "interval": "every", "timezone": "zone", "tz": "zone", "time_zone": "zone",
	"catchup": "catch_up", "concurrency": "overlap", "concurrency_policy": "overlap",
}

// schedules reads the schedules mapping, in the file's order. tasks are
// the file's tasks, their needs checked.
func (p *parser) schedules(n *yaml.Node, tasks []Task) []schedule.Schedule {
	if n.Kind != yaml.MappingNode {
		p.errs.add(n.Line, "schedules is %s (it takes a mapping of schedule names to schedules, e.g. nightly: {task: report, cron: \"0 2 * * *\"})", describe(n))
		return nil
	}
	var out []schedule.Schedule
	for _, kv := range p.fields(n, "schedule") {
		if s, ok := p.schedule(kv, tasks); ok {
			out = append(out, s)
		}
	}
	return out
}

// schedKV is a schedule's key written in the file, for the line of its
// problems.
type schedKV map[string]pair

// schedule reads one schedule; ok when it has no problem.
func (p *parser) schedule(kv pair, tasks []Task) (schedule.Schedule, bool) {
	s := schedule.Schedule{Name: kv.key.Value}
	before := len(p.errs.errs)
	if !scheduleNameOK(s.Name) {
		p.errs.add(kv.key.Line, "schedule name %q is not valid (use 1 to %d letters, digits and - _ . /)", s.Name, schedule.MaxNameLen)
	}
	if kv.val.Kind != yaml.MappingNode {
		p.errs.add(kv.val.Line, "schedule %q is %s (a schedule is a mapping with task: and cron: or every:, e.g. {task: report, cron: \"0 2 * * *\"})", s.Name, describe(kv.val))
		return s, false
	}
	keys := make(schedKV)
	for _, f := range p.fields(kv.val, "key") {
		if slices.Contains(scheduleKeys, f.key.Value) {
			keys[f.key.Value] = f
			p.scheduleKey(&s, f)
		} else {
			p.unknownScheduleKey(f.key)
		}
	}
	p.scheduleTiming(kv, s, keys)
	if t, ok := keys["task"]; ok {
		p.scheduleTask(&s, t, tasks)
	} else {
		p.errs.add(kv.key.Line, "schedule %q has no task (add task: with the name of a task of this file)", s.Name)
	}
	if len(p.errs.errs) > before {
		return s, false
	}
	// What the keys' own checks let through, if anything, is the
	// schedule's as a whole.
	if err := s.Validate(); err != nil {
		p.errs.add(kv.key.Line, "%s", scheduleMessage(err, s.Name, s.Name))
		return s, false
	}
	return s, true
}

// scheduleNameOK says whether package schedule takes name: the schedule
// of an interval it names checks the name alone.
func scheduleNameOK(name string) bool {
	_, err := schedule.Schedule{Name: name, Every: time.Second}.Timing()
	return err == nil
}

// scheduleKey reads one of scheduleKeys into s; timing keys are checked
// together, by scheduleTiming, and task by scheduleTask.
func (p *parser) scheduleKey(s *schedule.Schedule, f pair) {
	v := f.val
	switch key := f.key.Value; key {
	case "cron":
		s.Cron = p.nonBlank(key, v, `a cron expression, e.g. "0 2 * * *" or @daily`)
	case "every":
		s.Every, _ = p.duration(key, v, "an interval such as 30s or 1h; leave every out to use cron")
	case "zone":
		s.Zone = p.nonBlank(key, v, "an IANA time zone, e.g. Europe/Paris; leave zone out for UTC")
	case "jitter":
		if d, ok := p.duration(key, v, ""); ok && d > schedule.MaxJitter {
			p.errs.add(v.Line, "jitter %q is too long (a slot's task waits at most %gh: give at most that)", v.Value, schedule.MaxJitter.Hours())
		} else {
			s.Jitter = d
		}
	case "overlap":
		s.Overlap = p.overlap(v)
	case "catch_up":
		s.CatchUp, _ = p.duration(key, v, "how late a missed slot may still run; leave catch_up out for 1h")
	case "pause_after":
		s.PauseAfter, _ = p.integer(key, v, 0, schedule.MaxPauseAfter,
			fmt.Sprintf("a whole number from 0 to %d: failed slots in a row that pause the schedule; 0 never pauses it", schedule.MaxPauseAfter))
	}
}

// nonBlank reads a string that cannot be blank; "" when it is not one.
func (p *parser) nonBlank(key string, n *yaml.Node, want string) string {
	s, ok := p.scalar(key, n, want)
	if ok && strings.TrimSpace(s) == "" {
		p.errs.add(n.Line, "%s is blank (it takes %s)", key, want)
		return ""
	}
	return s
}

func (p *parser) overlap(n *yaml.Node) schedule.Overlap {
	names := make([]string, 0, len(schedule.Overlaps))
	for _, o := range schedule.Overlaps {
		names = append(names, string(o))
	}
	want := strings.Join(names, ", ")
	s, ok := p.scalar("overlap", n, want)
	switch {
	case !ok:
	case slices.Contains(names, s):
		return schedule.Overlap(s)
	default:
		hint := "it takes " + want
		if c, ok := suggest.Closest(s, names); ok {
			hint = fmt.Sprintf("did you mean %q? %s", c, hint)
		}
		p.errs.add(n.Line, "overlap %q is not an overlap policy (%s)", s, hint)
	}
	return ""
}

func (p *parser) unknownScheduleKey(k *yaml.Node) {
	switch {
	case k.Value == "run" || k.Value == "needs" || slices.Contains(settingKeys, k.Value):
		p.errs.add(k.Line, "unknown key %q in a schedule (it is a task's key: set it on the task the schedule runs)", k.Value)
	default:
		p.unknownKey(k, scheduleKeys, scheduleSynonyms, "a schedule's keys")
	}
}

// scheduleTiming checks s's cron, every and zone, each on its key's line.
// Each is checked apart from the others, so that a mistake is reported
// once, where it is written.
func (p *parser) scheduleTiming(kv pair, s schedule.Schedule, keys schedKV) {
	cron, hasCron := keys["cron"]
	every, hasEvery := keys["every"]
	zone, hasZone := keys["zone"]
	probe := schedule.Schedule{Name: s.Name}
	if !scheduleNameOK(s.Name) {
		probe.Name = "schedule" // its name is reported already
	}
	check := func(line int, t schedule.Schedule) {
		if _, err := t.Timing(); err != nil {
			p.errs.add(line, "%s", scheduleMessage(err, t.Name, s.Name))
		}
	}
	switch {
	case hasCron && hasEvery:
		p.errs.add(max(cron.key.Line, every.key.Line), "schedule %q has both cron and every (keep one: cron for times of day, every for an interval)", s.Name)
	case !hasCron && !hasEvery:
		p.errs.add(kv.key.Line, `schedule %q has no cron and no every (add cron: with a cron expression, e.g. cron: "0 2 * * *", or every: with an interval, e.g. every: 30s)`, s.Name)
	case hasCron && s.Cron != "":
		t := probe
		t.Cron = s.Cron
		check(cron.key.Line, t)
	case hasEvery && s.Every > 0:
		t := probe
		t.Every = s.Every
		check(every.key.Line, t)
	}
	if hasZone && s.Zone != "" {
		t := probe
		t.Zone, t.Cron = s.Zone, "@daily"
		if _, err := t.Timing(); err == nil && !hasCron && s.Every > 0 {
			t.Cron, t.Every = "", s.Every
		}
		check(zone.key.Line, t)
	}
}

// scheduleTask sets s's task from the file's task that kv names.
func (p *parser) scheduleTask(s *schedule.Schedule, kv pair, tasks []Task) {
	name, ok := p.scalar("task", kv.val, "the name of a task of this file")
	if !ok {
		return
	}
	line := kv.val.Line
	i := slices.IndexFunc(tasks, func(t Task) bool { return t.Name == name })
	switch {
	case i < 0 && len(tasks) > 0:
		vs := make([]vertex, 0, len(tasks))
		for _, t := range tasks {
			vs = append(vs, vertex{name: t.Name})
		}
		p.errs.add(line, "schedule %q runs task %q, which is not a task of this file (%s)", s.Name, name, tasksHint(vs, "", name))
	case i < 0:
		// The file has no tasks: that is reported already.
	case len(tasks[i].Needs) > 0:
		p.errs.add(line, "a schedule runs one task alone; task %q needs %s (schedule a task without needs, such as one whose run does every step)", name, quoteAll(tasks[i].Needs))
	default:
		nt, err := tasks[i].newTask()
		if err != nil {
			p.errs.add(line, "schedule %q: %v (report this bug)", s.Name, err)
			return
		}
		s.Task = scheduleTask(nt)
	}
}

// scheduleTask is what a schedule enqueues of a file's task.
func scheduleTask(nt task.NewTask) schedule.Task {
	return schedule.Task{
		Kind: nt.Kind, Args: nt.Args, Queue: nt.Queue, Group: nt.Group, Tenant: nt.Tenant,
		Priority: nt.Priority, Policy: nt.Policy, Timeout: nt.Timeout, Grace: nt.Grace, PoisonAfter: nt.PoisonAfter,
	}
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// scheduleMessage writes an error of package schedule about the schedule
// named checked (as written, or a stand-in for a name that is not valid)
// as the parser's messages read: what is wrong, then what to write in
// parentheses. Its words are the schedule package's.
func scheduleMessage(err error, checked, name string) string {
	msg := err.Error()
	if errors.Is(err, schedule.ErrInvalid) {
		msg = strings.TrimPrefix(msg, schedule.ErrInvalid.Error()+": ")
	}
	msg = strings.TrimPrefix(msg, fmt.Sprintf("schedule %q: ", checked))
	prefix := fmt.Sprintf("schedule %q: ", name)
	if what, want, ok := strings.Cut(msg, ": want "); ok {
		return prefix + what + " (want " + want + ")"
	}
	if i := strings.Index(msg, ": "); i >= 0 {
		return prefix + msg[:i] + " (" + msg[i+2:] + ")"
	}
	return prefix + msg + " (see schedules.md)"
}
