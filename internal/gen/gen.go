// Package gen is grit gen: it reads the //grit:retry and //grit:handler
// directives in the doc comments of a package's handler functions and
// writes the file that registers them (FileName), with their policies and
// catch kinds. docs/directives.md is the user's guide.
package gen

import (
	"cmp"
	"errors"
	"fmt"
	"go/token"
	"slices"
)

// FileName is the generated file, one per package.
const FileName = "grit_handlers_gen.go"

// Handler is one handler a package's directives declare.
type Handler struct {
	Func   string // the function's name
	Kind   string
	Policy string // "" for the handler's default
	Catch  string // "" for none
	Pos    token.Position
}

// Package is a package's directives.
type Package struct {
	Dir, Name string
	Handlers  []Handler // in source order (file name, then line)
}

// Error is a directive that cannot be generated: where, what is wrong,
// and the fix.
type Error struct {
	Pos token.Position
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.Pos.Filename, e.Pos.Line, e.Msg) }

// File is a generated file: Content nil means the package declares no
// handler, and a file left from before is to be removed.
type File struct {
	Path    string
	Content []byte
}

// Generate reads the packages in dirs and returns their generated files,
// in dirs' order. Every directive is checked first, across all the
// packages: a catch kind must be a kind one of them declares, and a kind
// is declared once. The error joins every *Error found, in file order.
func Generate(dirs []string) ([]File, error) {
	fset := token.NewFileSet()
	var pkgs []Package
	var errs []*Error
	for _, dir := range dirs {
		p, es, err := load(fset, dir)
		if err != nil {
			return nil, err
		}
		pkgs, errs = append(pkgs, p), append(errs, es...)
	}
	errs = append(errs, crossCheck(pkgs)...)
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	out := make([]File, len(pkgs))
	for i, p := range pkgs {
		out[i].Path = joinPath(p.Dir, FileName)
		if len(p.Handlers) == 0 {
			continue
		}
		src, err := Source(p)
		if err != nil {
			return nil, err
		}
		out[i].Content = src
	}
	return out, nil
}

// crossCheck finds the kinds declared twice and the catch kinds no
// handler declares.
func crossCheck(pkgs []Package) []*Error {
	var errs []*Error
	first := map[string]Handler{}
	for _, p := range pkgs {
		for _, h := range p.Handlers {
			if f, dup := first[h.Kind]; dup {
				errs = append(errs, &Error{h.Pos, fmt.Sprintf("kind %q of %s is also %s's (%s:%d): give one of them another kind with //grit:handler KIND",
					h.Kind, h.Func, f.Func, f.Pos.Filename, f.Pos.Line)})
				continue
			}
			first[h.Kind] = h
		}
	}
	for _, p := range pkgs {
		for _, h := range p.Handlers {
			if h.Catch != "" && h.Catch == h.Kind {
				errs = append(errs, &Error{h.Pos, fmt.Sprintf("%s is its own catch (%q): a catch task that fails would enqueue another, without end; name another kind", h.Func, h.Kind)})
				continue
			}
			if _, ok := first[h.Catch]; h.Catch != "" && !ok {
				errs = append(errs, &Error{h.Pos, fmt.Sprintf("catch kind %q: no handler in the packages generated declares it (write a handler of that kind, with //grit:handler %s on it, or generate its package too)",
					h.Catch, h.Catch)})
			}
		}
	}
	return errs
}

func joinErrors(errs []*Error) error {
	slices.SortStableFunc(errs, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Pos.Filename, b.Pos.Filename), cmp.Compare(a.Pos.Line, b.Pos.Line))
	})
	all := make([]error, len(errs))
	for i, e := range errs {
		all[i] = e
	}
	return errors.Join(all...)
}
