package taskfile

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

var (
	topKeys  = []string{"name", "max_failures", "defaults", "tasks", "schedules", "limits"}
	taskKeys = append([]string{"run", "needs"}, settingKeys...)
)

// extensionPrefix starts top-level keys that are ignored, a place to define
// YAML anchors (as Docker Compose's extension fields).
const extensionPrefix = "x-"

// file reads the top-level mapping.
func (p *parser) file(root *yaml.Node, path string) *File {
	f := &File{Path: path}
	if root.Kind != yaml.MappingNode {
		p.errs.add(root.Line, "the file is %s (a task file is a mapping with name: and tasks:)", describe(root))
		return f
	}
	var defaults settings
	var tasks, schedules *pair
	hasName := false
	for _, kv := range p.fields(root, "key") {
		switch kv.key.Value {
		case "name":
			f.Name, _ = p.runName(kv.val)
			hasName = true
		case "max_failures":
			f.MaxFailures, _ = p.integer("max_failures", kv.val, 0, maxInt32, "a whole number from 0; 0 for no limit")
		case "defaults":
			defaults = p.defaults(kv.val)
		case "tasks":
			tasks = &kv
		case "schedules":
			schedules = &kv
		case "limits":
			f.Limits = p.limits(kv.val)
		default:
			if strings.HasPrefix(kv.key.Value, extensionPrefix) {
				continue
			}
			p.unknownTop(kv.key)
		}
	}
	if !hasName {
		p.errs.add(root.Line, "the run has no name (add name: followed by a name, e.g. name: settlement)")
	}
	if tasks == nil {
		p.errs.add(root.Line, "the file has no tasks (add tasks: with at least one task)")
	} else {
		f.Tasks = p.tasks(*tasks, defaults)
	}
	if schedules != nil {
		f.Schedules = p.schedules(schedules.val, f.Tasks)
	}
	return f
}

func (p *parser) runName(n *yaml.Node) (string, bool) {
	s, ok := p.scalar("name", n, "the run's name, e.g. settlement")
	if !ok {
		return "", false
	}
	if problem := runNameProblem(s); problem != "" {
		p.errs.add(n.Line, "name %q %s (give the run a short name on one line, e.g. settlement)", s, problem)
		return "", false
	}
	return s, true
}

func (p *parser) unknownTop(k *yaml.Node) {
	switch {
	case slices.Contains(settingKeys, k.Value):
		p.errs.add(k.Line, "unknown key %q at the top level (it is a task's key: put it under defaults: for every task, or in a task)", k.Value)
	case k.Value == "run" || k.Value == "needs":
		p.errs.add(k.Line, "unknown key %q at the top level (it is a task's key: put it in a task, under tasks:)", k.Value)
	default:
		p.unknownKey(k, topKeys, nil, "the top-level keys")
	}
}

// defaults reads the defaults mapping.
func (p *parser) defaults(n *yaml.Node) settings {
	var s settings
	if n.Kind != yaml.MappingNode {
		p.errs.add(n.Line, "defaults is %s (it takes a mapping of task keys, e.g. timeout: 30s)", describe(n))
		return s
	}
	for _, kv := range p.fields(n, "key") {
		if p.setting(&s, kv) {
			continue
		}
		switch k := kv.key.Value; k {
		case "run", "needs":
			p.errs.add(kv.key.Line, "%s cannot have a default (set it in each task)", k)
		default:
			p.unknownKey(kv.key, settingKeys, nil, "the keys of defaults")
		}
	}
	p.checkExits(s.exits, s.exits)
	return s
}

// tasks reads the tasks mapping, in the file's order, then checks needs.
func (p *parser) tasks(kv pair, defaults settings) []Task {
	n := kv.val
	if n.Kind != yaml.MappingNode {
		p.errs.add(n.Line, "tasks is %s (it takes a mapping of task names to tasks)", describe(n))
		return nil
	}
	fields := p.fields(n, "task")
	if len(fields) == 0 {
		p.errs.add(kv.key.Line, "the file has no tasks (add at least one task under tasks:)")
		return nil
	}
	tasks := make([]Task, 0, len(fields))
	vs := make([]vertex, 0, len(fields))
	for _, f := range fields {
		t, needs := p.task(f, defaults)
		tasks = append(tasks, t)
		vs = append(vs, vertex{name: t.Name, line: t.Line, needs: needs})
	}
	for i, needs := range checkNeeds(vs, &p.errs) {
		tasks[i].Needs = needs
	}
	return tasks
}

// task reads one task and returns it with its needs as written.
func (p *parser) task(kv pair, defaults settings) (Task, []ref) {
	t := Task{Name: kv.key.Value, Line: kv.key.Line}
	if !nameRE.MatchString(t.Name) {
		p.errs.add(t.Line, "task name %q is not valid (%s)", t.Name, nameRule)
	}
	n := kv.val
	if n.Kind != yaml.MappingNode {
		p.errs.add(n.Line, "task %q is %s (a task is a mapping with at least run:, e.g. run: ./fetch.sh)", t.Name, describe(n))
		return t, nil
	}
	var s settings
	var needs []ref
	hasRun := false
	for _, f := range p.fields(n, "key") {
		switch f.key.Value {
		case "run":
			t.Exec.Argv, t.Exec.Shell = p.run(f.val)
			hasRun = true
		case "needs":
			needs = p.needs(f.val)
		default:
			if !p.setting(&s, f) {
				p.unknownKey(f.key, taskKeys, nil, "a task's keys")
			}
		}
	}
	if !hasRun {
		p.errs.add(t.Line, "task %q has no run (add run: with a command, e.g. run: ./fetch.sh)", t.Name)
	}
	merged := s.over(defaults)
	p.checkExits(merged.exits, s.exits)
	p.checkSnoozeKeys(p.fields(n, "key"), merged)
	merged.apply(&t)
	return t, needs
}

const runHint = `a command string, run with sh -c, or a list: the program and its arguments, e.g. [./settle, --day, today]`

// run reads a task's command: a string for sh -c, or an argv list.
func (p *parser) run(n *yaml.Node) (argv []string, shell string) {
	switch {
	case n.Kind == yaml.SequenceNode:
		return p.argv(n), ""
	case n.Kind != yaml.ScalarNode || isNull(n):
		p.errs.add(n.Line, "run is %s (it takes %s)", describe(n), runHint)
	case n.ShortTag() != "!!str":
		p.errs.add(n.Line, "run is %s, which is not a string (quote it: run: %q)", n.Value, n.Value)
	case strings.TrimSpace(n.Value) == "":
		p.errs.add(n.Line, "run is blank (it takes %s)", runHint)
	default:
		s, _ := p.text("run", n, runHint)
		return nil, s
	}
	return nil, ""
}

func (p *parser) argv(n *yaml.Node) []string {
	if len(n.Content) == 0 {
		p.errs.add(n.Line, "run is an empty list (give the program and its arguments, e.g. [./settle, --day, today])")
		return nil
	}
	argv := make([]string, 0, len(n.Content))
	for i, it := range n.Content {
		it = resolve(it)
		switch {
		case it.Kind == yaml.ScalarNode && it.ShortTag() == "!!str":
			s, _ := p.text("run", it, "strings")
			argv = append(argv, s)
			if i == 0 && s == "" {
				p.errs.add(it.Line, "run's program, its first item, is empty (name the program to run)")
			}
		case it.Kind == yaml.ScalarNode && !isNull(it):
			p.errs.add(it.Line, "run item %s is not a string (quote it: %q)", it.Value, it.Value)
		case it.Kind == yaml.MappingNode:
			p.errs.add(it.Line, "run item is a mapping (each item is one argument: quote an item that holds \": \")")
		default:
			p.errs.add(it.Line, "run item is %s (each item is one argument, a string)", describe(it))
		}
	}
	return argv
}

// needs reads a task name or a list of them.
func (p *parser) needs(n *yaml.Node) []ref {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = items[:0]
		for _, it := range n.Content {
			items = append(items, resolve(it))
		}
	}
	var refs []ref
	for _, it := range items {
		if s, ok := p.scalar("needs", it, "a task name or a list of them, e.g. [fetch, report]"); ok {
			refs = append(refs, ref{name: s, line: it.Line})
		}
	}
	return refs
}
