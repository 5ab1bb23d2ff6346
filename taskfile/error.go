package taskfile

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Error is one problem found in a task file. Parse and NewRun return every
// problem they find, joined with errors.Join and sorted by line; use
// errors.As to get the first, or the Unwrap() []error method of the joined
// error to walk them all.
type Error struct {
	Path string // the file's path, as given to Parse
	Line int    // 1-based; 0 when the problem is not on one line
	Msg  string // what is wrong, then how to fix it in parentheses
}

// Error returns "taskfile PATH:LINE: MSG".
func (e *Error) Error() string {
	switch {
	case e.Path == "" && e.Line == 0:
		return "taskfile: " + e.Msg
	case e.Path == "":
		return fmt.Sprintf("taskfile line %d: %s", e.Line, e.Msg)
	case e.Line == 0:
		return fmt.Sprintf("taskfile %s: %s", e.Path, e.Msg)
	}
	return fmt.Sprintf("taskfile %s:%d: %s", e.Path, e.Line, e.Msg)
}

// errList collects the problems of one file.
type errList struct {
	path  string
	lines int // the file's lines, when known: yaml places some empty values past the end
	errs  []*Error
}

func (l *errList) add(line int, format string, args ...any) {
	if l.lines > 0 {
		line = min(line, l.lines)
	}
	l.errs = append(l.errs, &Error{Path: l.path, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// err returns the problems sorted by line, without repeats (a mapping merged
// or aliased in two places is checked twice), or nil.
func (l *errList) err() error {
	if len(l.errs) == 0 {
		return nil
	}
	slices.SortStableFunc(l.errs, func(a, b *Error) int { return cmp.Compare(a.Line, b.Line) })
	seen := make(map[Error]bool, len(l.errs))
	errs := make([]error, 0, len(l.errs))
	for _, e := range l.errs {
		if !seen[*e] {
			seen[*e] = true
			errs = append(errs, e)
		}
	}
	return errors.Join(errs...)
}
