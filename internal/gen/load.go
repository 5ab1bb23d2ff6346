package gen

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// load parses the package in dir (its non-test files that build here,
// without the generated file) and reads its directives. An error is one
// of reading the files; what is wrong in them is in errs.
func load(fset *token.FileSet, dir string) (Package, []*Error, error) {
	p := Package{Dir: dir}
	names, err := goFiles(dir)
	if err != nil {
		return p, nil, err
	}
	var errs []*Error
	for _, name := range names {
		path := joinPath(dir, name)
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return p, nil, fmt.Errorf("grit gen: %w", err)
		}
		if p.Name == "" {
			p.Name = f.Name.Name
		}
		hs, es := fileHandlers(fset, f)
		p.Handlers, errs = append(p.Handlers, hs...), append(errs, es...)
	}
	if len(names) == 0 {
		return p, nil, fmt.Errorf("grit gen: %s: no Go files (name a directory of a package)", dir)
	}
	return p, errs, nil
}

// goFiles are the names, sorted, of dir's Go files gen reads.
func goFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("grit gen: %w", err)
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || n == FileName {
			continue
		}
		if ok, err := build.Default.MatchFile(dir, n); err != nil || !ok {
			continue
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// fileHandlers reads the directives of one file: those in the doc
// comments of functions, and any elsewhere, which are errors.
func fileHandlers(fset *token.FileSet, f *ast.File) ([]Handler, []*Error) {
	var hs []Handler
	var errs []*Error
	used := map[*ast.Comment]bool{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Doc == nil {
			continue
		}
		h, found, es := funcHandler(fset, f, fn, used)
		errs = append(errs, es...)
		if found { // with errors too: its kind is declared, for the cross-check
			hs = append(hs, h)
		}
	}
	for _, g := range f.Comments {
		for _, c := range g.List {
			if strings.HasPrefix(c.Text, directivePrefix) && !used[c] {
				errs = append(errs, &Error{fset.Position(c.Pos()), fmt.Sprintf("%s is not in a function's doc comment (put it in the comment just above a handler func)", directiveName(c.Text))})
			}
		}
	}
	return hs, errs
}

func directiveName(text string) string {
	name, _, _ := strings.Cut(text, " ")
	name, _, _ = strings.Cut(name, "\t")
	return name
}

// funcHandler reads the directives in fn's doc comment; found is false
// when it has none.
func funcHandler(fset *token.FileSet, f *ast.File, fn *ast.FuncDecl, used map[*ast.Comment]bool) (h Handler, found bool, errs []*Error) {
	h = Handler{Func: fn.Name.Name, Pos: fset.Position(fn.Pos())}
	seen := map[string]bool{}
	for _, c := range fn.Doc.List {
		if !strings.HasPrefix(c.Text, directivePrefix) {
			continue
		}
		used[c], found = true, true
		pos := fset.Position(c.Pos())
		name := directiveName(c.Text)
		rest := strings.TrimPrefix(c.Text, name)
		if seen[name] {
			errs = append(errs, &Error{pos, fmt.Sprintf("%s twice on %s (keep one)", name, fn.Name.Name)})
			continue
		}
		seen[name] = true
		switch name {
		case retryDirective:
			r, err := ParseRetry(rest)
			if err != nil {
				errs = append(errs, &Error{pos, fmt.Sprintf("%s: %v", name, err)})
			}
			h.Policy, h.Catch = r.Policy, r.Catch
		case handlerDirective:
			k, err := ParseHandler(rest)
			if err != nil {
				errs = append(errs, &Error{pos, fmt.Sprintf("%s: %v", name, err)})
			}
			h.Kind = k
		default:
			errs = append(errs, &Error{pos, fmt.Sprintf("unknown directive %s (want //grit:retry or //grit:handler)", name)})
		}
	}
	if !found {
		return h, false, nil
	}
	if msg := shapeProblem(f, fn); msg != "" {
		errs = append(errs, &Error{h.Pos, msg})
	}
	if h.Kind == "" {
		h.Kind = KindOf(fn.Name.Name)
	}
	return h, true, errs
}

// joinPath is filepath.Join that keeps "." out of the names it makes, so
// that errors name files as a user wrote the directory.
func joinPath(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return filepath.Join(dir, name)
}
