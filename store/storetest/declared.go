package storetest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
)

// Declared checks that a driver states its contract to the compiler, in
// one place: var _ store.Store = (*T)(nil), and one such line for each
// optional capability (store.Optional) that s, a *T, has, all in the file
// that declares T. It reads the Go files (tests aside) of the current
// directory, which is the driver's own when its tests call it. A line
// for a capability s lacks would not compile; one for a capability that
// store.Store embeds says nothing more, and fails the check, as does a
// missing line, so that the block says exactly what the driver has.
func Declared(t *testing.T, s store.Store) {
	t.Helper()
	typ := reflect.TypeOf(s)
	if typ.Kind() != reflect.Pointer {
		t.Fatalf("the store is a %s, not a pointer to the driver's type", typ)
	}
	name := typ.Elem().Name()
	declared, lines := declarations(t, name)
	if declared == "" {
		t.Fatalf("no file of this directory declares type %s", name)
	}
	want := []string{"store.Store"}
	for _, c := range store.Optional() {
		if c.In(s) {
			want = append(want, c.Name)
		}
	}
	var got []string
	for capability, file := range lines {
		got = append(got, capability)
		if file != declared {
			t.Errorf("var _ %s = (*%s)(nil) is in %s: put it beside the others, in %s, which declares %s", capability, name, file, declared, name)
		}
		if !slices.Contains(want, capability) {
			t.Errorf("var _ %s = (*%s)(nil): %s is part of store.Store, which says it already", capability, name, capability)
		}
	}
	for _, capability := range want {
		if _, ok := lines[capability]; !ok {
			t.Errorf("%s has no var _ %s = (*%s)(nil) line: add it in %s", typ, capability, name, declared)
		}
	}
	if t.Failed() {
		slices.Sort(got)
		t.Logf("declared: %s; want store.Store and the optional capabilities the store has: %s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
}

// declarations reads the Go files of the current directory: the file that
// declares type name, and each store.X asserted of *name (var _ store.X =
// (*name)(nil)) with the file that asserts it.
func declarations(t *testing.T, name string) (declared string, lines map[string]string) {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	lines = map[string]string{}
	fset := token.NewFileSet()
	for _, e := range entries {
		file := e.Name()
		if !strings.HasSuffix(file, ".go") || strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range g.Specs {
				switch sp := spec.(type) {
				case *ast.TypeSpec:
					if sp.Name.Name == name {
						declared = file
					}
				case *ast.ValueSpec:
					if capability, ok := assertion(sp, name); ok {
						lines[capability] = file
					}
				}
			}
		}
	}
	return declared, lines
}

// assertion reports the store.X of a var _ store.X = (*name)(nil).
func assertion(sp *ast.ValueSpec, name string) (string, bool) {
	if len(sp.Names) != 1 || sp.Names[0].Name != "_" || len(sp.Values) != 1 {
		return "", false
	}
	sel, ok := sp.Type.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok || pkg.Name != "store" {
		return "", false
	}
	call, ok := sp.Values[0].(*ast.CallExpr)
	if !ok {
		return "", false
	}
	paren, ok := call.Fun.(*ast.ParenExpr)
	if !ok {
		return "", false
	}
	star, ok := paren.X.(*ast.StarExpr)
	if !ok {
		return "", false
	}
	if id, ok := star.X.(*ast.Ident); !ok || id.Name != name {
		return "", false
	}
	return "store." + sel.Sel.Name, true
}
