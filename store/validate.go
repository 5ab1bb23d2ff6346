package store

import (
	"fmt"
	"slices"
	"strings"

	"github.com/grit-run/grit/task"
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), task.ErrInvalid)
}

// ValidateRun checks a run's tasks and that their needs form a DAG (no
// unknown names, no cycles); drivers call it before inserting a run.
func ValidateRun(r task.NewRun) error {
	if r.MaxFailures < 0 {
		return invalid("run %q: negative max_failures", r.Name)
	}
	names := make(map[string]bool, len(r.Tasks))
	for _, t := range r.Tasks {
		if t.Name == "" {
			return invalid("run %q: a task has no name (tasks of a run are named, so that needs can refer to them)", r.Name)
		}
		if names[t.Name] {
			return invalid("run %q: two tasks are named %q", r.Name, t.Name)
		}
		names[t.Name] = true
		if err := t.Validate(); err != nil {
			return fmt.Errorf("run %q: %w", r.Name, err)
		}
	}
	for _, t := range r.Tasks {
		for _, n := range t.Needs {
			if !names[n] {
				return invalid("run %q: task %q needs %q, which is not a task of the run", r.Name, t.Name, n)
			}
		}
	}
	return checkCycles(r)
}

// checkCycles rejects needs that loop, naming one task on the loop.
func checkCycles(r task.NewRun) error {
	needs := make(map[string][]string, len(r.Tasks))
	for _, t := range r.Tasks {
		needs[t.Name] = t.Needs
	}
	const (
		visiting = 1
		done     = 2
	)
	mark := make(map[string]int, len(r.Tasks))
	var visit func(n string) string
	visit = func(n string) string {
		switch mark[n] {
		case visiting:
			return n
		case done:
			return ""
		}
		mark[n] = visiting
		for _, m := range needs[n] {
			if c := visit(m); c != "" {
				return c
			}
		}
		mark[n] = done
		return ""
	}
	for _, t := range r.Tasks {
		if c := visit(t.Name); c != "" {
			return invalid("run %q: needs form a cycle through task %q", r.Name, c)
		}
	}
	return nil
}

// ValidateAudit checks an audit entry before it is appended; drivers call
// it. An entry must say who acted and what they did: the log is read to
// answer exactly that.
func ValidateAudit(e AuditEntry) error {
	switch {
	case strings.TrimSpace(e.Who) == "":
		return invalid("audit %q: no operator: say who acted (the session's name, e.g. \"local\")", e.Action)
	case strings.TrimSpace(e.Action) == "":
		return invalid("audit by %q: no action: say what was done (e.g. \"replay\")", e.Who)
	case e.Count < 0:
		return invalid("audit %q by %q: negative count %d", e.Action, e.Who, e.Count)
	}
	return nil
}

// WorkerKinds is a worker's kinds as drivers record them: sorted, without
// repeats, never nil.
func WorkerKinds(kinds []string) []string {
	out := append([]string{}, kinds...)
	slices.Sort(out)
	return slices.Compact(out)
}
