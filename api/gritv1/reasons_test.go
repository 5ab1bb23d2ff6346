package gritv1

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestEveryReasonIsDocumented: docs/api.md's table has a row for every
// reason a client may get, so that a new reason cannot go undocumented.
func TestEveryReasonIsDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "reasons.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		vs, ok := node.(*ast.ValueSpec)
		if !ok || !strings.HasPrefix(vs.Names[0].Name, "Reason") {
			return true
		}
		for _, v := range vs.Values {
			reason, err := strconv.Unquote(v.(*ast.BasicLit).Value)
			if err != nil {
				t.Fatal(err)
			}
			n++
			if !strings.Contains(string(doc), "\n| `"+reason+"` |") {
				t.Errorf("docs/api.md has no row for the reason %s", reason)
			}
		}
		return true
	})
	if n < 20 {
		t.Fatalf("found %d reasons in reasons.go, want them all", n)
	}
}
