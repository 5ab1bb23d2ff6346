package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
)

// bare is a store wrapper that embeds the Store interface alone: it
// passes the required capabilities on and hides every optional one.
type bare struct{ store.Store }

// complete has every capability.
type complete struct {
	store.Store
	store.Waker
	store.CancelWatcher
	store.Advisor
	store.Overview
	store.PollReporter
	store.Backlog
	store.Enqueues
	store.Console
	store.Auditor
	store.Pauser
	store.PauseWatcher
	store.Scheduler
	store.Machines
	store.InTx
	store.Mailbox
	store.Awaiter
	store.Connector
	store.Weigher
	store.Replicated
}

func TestMissingOptional(t *testing.T) {
	t.Parallel()
	opt := store.Optional()
	got := store.MissingOptional(bare{})
	if len(got) != len(opt) {
		t.Fatalf("bare lacks %d optional capabilities, want all %d: %q", len(got), len(opt), got)
	}
	for i, c := range opt {
		if c.In(bare{}) || !c.In(complete{}) {
			t.Errorf("%s: In(bare) = %v, In(complete) = %v, want false and true", c.Name, c.In(bare{}), c.In(complete{}))
		}
		if want := c.Name + " (" + c.Provides + ": " + c.Without + ")"; got[i] != want {
			t.Errorf("entry %d is %q, want %q", i, got[i], want)
		}
		if c.Provides == "" || c.Without == "" {
			t.Errorf("%s does not say what it gives and what is lost without it", c.Name)
		}
	}
	if !strings.Contains(got[0], "store.Waker (") || !strings.Contains(got[0], "next poll") {
		t.Errorf("the Waker entry does not say workers poll instead: %q", got[0])
	}
	if got := store.MissingOptional(complete{}); len(got) != 0 {
		t.Errorf("complete lacks %q", got)
	}
}

// source is package store's own code, parsed: its files (tests aside)
// and the interfaces they declare.
type source struct {
	doc        string
	interfaces map[string]*ast.InterfaceType
}

func parseStore(t *testing.T) source {
	t.Helper()
	fset := token.NewFileSet()
	src := source{interfaces: map[string]*ast.InterfaceType{}}
	files, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".go") || strings.HasSuffix(f.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f.Name(), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if file.Doc != nil {
			src.doc += file.Doc.Text()
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if it, ok := ts.Type.(*ast.InterfaceType); ok {
					src.interfaces[ts.Name.Name] = it
				}
			}
			return true
		})
	}
	if src.interfaces["Store"] == nil || src.doc == "" {
		t.Fatalf("found no Store interface or no package doc in the package's files")
	}
	return src
}

// embedded are the interfaces Store embeds, in order.
func (s source) embedded() []string {
	var out []string
	for _, f := range s.interfaces["Store"].Methods.List {
		if id, ok := f.Type.(*ast.Ident); ok && len(f.Names) == 0 {
			out = append(out, id.Name)
		}
	}
	return out
}

func optionalNames() []string {
	var out []string
	for _, c := range store.Optional() {
		out = append(out, strings.TrimPrefix(c.Name, "store."))
	}
	return out
}

// TestEveryInterfaceIsRequiredOrOptional: each interface the package
// declares is part of Store or on the one list of optional capabilities
// (with what is lost without it), never neither and never both.
func TestEveryInterfaceIsRequiredOrOptional(t *testing.T) {
	t.Parallel()
	src := parseStore(t)
	required, optional := src.embedded(), optionalNames()
	if len(required) == 0 {
		t.Fatal("Store embeds no capability")
	}
	for name := range src.interfaces {
		in, opt := slices.Contains(required, name), slices.Contains(optional, name)
		switch {
		case name == "Store":
		case in && opt:
			t.Errorf("store.%s is part of Store and on the optional list too", name)
		case !in && !opt:
			t.Errorf("store.%s is neither part of Store nor on the optional list (capability.go): "+
				"embed it in Store, or list it with what is lost without it", name)
		}
	}
	for _, name := range optional {
		if src.interfaces[name] == nil {
			t.Errorf("the optional list names store.%s, which the package does not declare", name)
		}
	}
}

// TestPackageDocNamesTheCapabilities: the package doc's two lists, what
// Store embeds and what is optional, are exactly the code's, in order.
func TestPackageDocNamesTheCapabilities(t *testing.T) {
	t.Parallel()
	src := parseStore(t)
	doc := strings.Join(strings.Fields(src.doc), " ")
	for _, c := range []struct {
		opening string
		want    []string
	}{
		{"Store embeds the capabilities the engine's and the API server's promises rest on:", src.embedded()},
		{"The optional capabilities are", optionalNames()},
	} {
		_, rest, ok := strings.Cut(doc, c.opening)
		if !ok {
			t.Errorf("the package doc has no sentence opening %q", c.opening)
			continue
		}
		list, _, _ := strings.Cut(rest, ":")
		list, _, _ = strings.Cut(list, ".")
		var got []string
		for _, w := range regexp.MustCompile(`[A-Za-z]+`).FindAllString(list, -1) {
			if src.interfaces[w] != nil {
				got = append(got, w)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("the package doc's %q names %v, want %v", c.opening, got, c.want)
		}
	}
}

// TestEngineDocNamesTheCapabilities: the page on what a store must do
// (docs/engine.md) names every capability, the required and the optional.
func TestEngineDocNamesTheCapabilities(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../docs/engine.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "## What a store must do")
	if !ok {
		t.Fatal(`docs/engine.md has no section "What a store must do"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, name := range append(parseStore(t).embedded(), optionalNames()...) {
		if !strings.Contains(section, "`store."+name+"`") {
			t.Errorf("docs/engine.md, What a store must do, does not name `store.%s`", name)
		}
	}
}
