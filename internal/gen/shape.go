package gen

import (
	"fmt"
	"go/ast"
	"strconv"
)

// wantShape is the shape of a handler, for the errors.
const wantShape = "func(ctx context.Context, args T) error"

// shapeProblem says what keeps fn from being a handler grit.Handle takes,
// or "" when nothing does: a top-level function, not generic, of shape
// func(context.Context, T) error for any T.
func shapeProblem(f *ast.File, fn *ast.FuncDecl) string {
	name := fn.Name.Name
	switch {
	case fn.Recv != nil:
		return fmt.Sprintf("%s is a method: a handler with directives is a top-level function (%s); call the method from one", name, wantShape)
	case fn.Type.TypeParams != nil:
		return fmt.Sprintf("%s is generic: a handler with directives has one args type (%s); write a function for each type", name, wantShape)
	case name == "_" || name == "init" || name == "main":
		return fmt.Sprintf("%s cannot be referred to: give the handler a name of its own (%s)", name, wantShape)
	}
	params := fieldTypes(fn.Type.Params)
	results := fieldTypes(fn.Type.Results)
	if len(params) != 2 || !isContext(f, params[0]) || isVariadic(params[1]) || len(results) != 1 || !isIdent(results[0], "error") {
		return fmt.Sprintf("%s is not a handler: want %s (take a context.Context and one args value, return only an error)", name, wantShape)
	}
	return ""
}

// fieldTypes lists a parameter list's types, one per parameter.
func fieldTypes(fl *ast.FieldList) []ast.Expr {
	if fl == nil {
		return nil
	}
	var out []ast.Expr
	for _, f := range fl.List {
		n := max(len(f.Names), 1)
		for range n {
			out = append(out, f.Type)
		}
	}
	return out
}

// isContext tells whether e is context.Context, through a name the file
// imports "context" under.
func isContext(f *ast.File, e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Context" {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	for _, s := range f.Imports {
		if p, err := strconv.Unquote(s.Path.Value); err != nil || p != "context" {
			continue
		}
		if s.Name == nil && x.Name == "context" || s.Name != nil && s.Name.Name == x.Name {
			return true
		}
	}
	return false
}

func isVariadic(e ast.Expr) bool { _, ok := e.(*ast.Ellipsis); return ok }

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
