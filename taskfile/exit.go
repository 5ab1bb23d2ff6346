package taskfile

import (
	"math"
	"slices"

	"go.yaml.in/yaml/v3"
)

// exitKind is one of the exit-code lists.
type exitKind int

const (
	exitRetry exitKind = iota
	exitPermanent
	exitResource
	exitSnooze
	numExitKinds
)

var exitKeys = [numExitKinds]string{"retry_on_exit", "permanent_on_exit", "resource_on_exit", "snooze_on_exit"}

func exitKindOf(key string) (exitKind, bool) {
	i := slices.Index(exitKeys[:], key)
	return exitKind(i), i >= 0
}

// exTempFail (EX_TEMPFAIL) is always transient.
const exTempFail = 75

// exitList is an exit-code list as written, each code with its line.
type exitList struct {
	codes []int
	lines []int
}

func (l *exitList) get() []int {
	if l == nil {
		return nil
	}
	return l.codes
}

// exitList reads a list of exit codes (or a single one). A code listed twice
// in the same list is kept once; a bad code is reported and left out.
func (p *parser) exitList(k exitKind, n *yaml.Node) *exitList {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = items[:0]
		for _, it := range n.Content {
			items = append(items, resolve(it))
		}
	}
	l := &exitList{codes: []int{}}
	for _, it := range items {
		code, ok := p.exitCode(k, it)
		if !ok {
			continue
		}
		if !slices.Contains(l.codes, code) {
			l.codes = append(l.codes, code)
			l.lines = append(l.lines, it.Line)
		}
	}
	return l
}

func (p *parser) exitCode(k exitKind, n *yaml.Node) (int, bool) {
	key := exitKeys[k]
	code, ok := p.integer(key, n, math.MinInt32, math.MaxInt32, "exit codes: a list of whole numbers from 1 to 255")
	switch {
	case !ok:
	case code == 0:
		p.errs.add(n.Line, "%s lists exit code 0, which is success (list only failing codes, 1 to 255)", key)
	case code < 0 || code > 255:
		p.errs.add(n.Line, "%s lists exit code %d, which is out of range (exit codes go from 1 to 255)", key, code)
	case code == exTempFail && k != exitRetry:
		p.errs.add(n.Line, "%s lists exit code 75 (EX_TEMPFAIL), which is always transient (remove it)", key)
	default:
		return code, true
	}
	return 0, false
}

// checkExits reports a code listed in two of the lists. Only pairs with at
// least one list in own (the lists a task writes itself) are reported, so a
// conflict within defaults is reported once, on defaults.
func (p *parser) checkExits(lists, own [numExitKinds]*exitList) {
	for a := range numExitKinds {
		for b := a + 1; b < numExitKinds; b++ {
			la, lb := lists[a], lists[b]
			if la == nil || lb == nil || (la != own[a] && lb != own[b]) {
				continue
			}
			for i, code := range lb.codes {
				j := slices.Index(la.codes, code)
				if j < 0 {
					continue
				}
				line := lb.lines[i]
				if lb != own[b] {
					line = la.lines[j]
				}
				p.errs.add(line, "exit code %d is listed in both %s and %s (a code has one meaning: keep it in one list)", code, exitKeys[a], exitKeys[b])
			}
		}
	}
}

// checkSnoozeKeys reports snooze and max_snoozes written in a task that
// has no snooze_on_exit, by its own or from defaults: they would never
// apply. In defaults they are not reported: they apply to the tasks that
// snooze.
func (p *parser) checkSnoozeKeys(fields []pair, merged settings) {
	if len(merged.exits[exitSnooze].get()) > 0 {
		return
	}
	for _, f := range fields {
		if k := f.key.Value; k == "snooze" || k == "max_snoozes" {
			p.errs.add(f.key.Line, "%s is set, but the task has no snooze_on_exit, so it never snoozes (list the exit codes that mean \"not yet\" in snooze_on_exit, or remove %s)", k, k)
		}
	}
}
