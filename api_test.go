package grit_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestRootOwnsItsAPI: the root package, the Go user's front door, has no
// type alias (go doc would show an alias, not the fields), and no exported
// function or method takes or returns a type of the drivers' contract or
// of an internal package: users write and read the root's own types and
// package task's.
func TestRootOwnsItsAPI(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range pkgs["grit"].Files {
		internal := map[string]bool{}
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			name := filepath.Base(path)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			if strings.Contains(path, "/internal/") || strings.HasSuffix(path, "grit/store") {
				internal[name] = true
			}
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok || !ts.Name.IsExported() {
						continue
					}
					if ts.Assign.IsValid() {
						t.Errorf("%s: type %s is an alias", fset.Position(ts.Pos()), ts.Name.Name)
					}
					if st, ok := ts.Type.(*ast.StructType); ok {
						for _, fl := range st.Fields.List {
							if len(fl.Names) > 0 && !fl.Names[0].IsExported() {
								continue
							}
							checkNames(t, fset, internal, ts.Name.Name, fl.Type)
						}
					}
				}
			case *ast.FuncDecl:
				if !d.Name.IsExported() || (d.Recv != nil && !exportedRecv(d.Recv)) {
					continue
				}
				checkNames(t, fset, internal, d.Name.Name, d.Type)
			}
		}
	}
}

func exportedRecv(fl *ast.FieldList) bool {
	typ := fl.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}

// checkNames fails for each type of an internal or store package that n
// names.
func checkNames(t *testing.T, fset *token.FileSet, internal map[string]bool, what string, n ast.Node) {
	t.Helper()
	ast.Inspect(n, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && internal[id.Name] {
				t.Errorf("%s: %s names %s.%s", fset.Position(sel.Pos()), what, id.Name, sel.Sel.Name)
			}
		}
		return true
	})
}
