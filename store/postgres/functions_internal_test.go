package postgres

import (
	"regexp"
	"strings"
	"testing"
)

// createFunction finds the functions a SQL text creates.
var createFunction = regexp.MustCompile(`(?i)\bcreate\s+(?:or\s+replace\s+)?function\s+([a-z_][a-z0-9_]*)`)

// sqlCode is a SQL text without its comments and its dollar-quoted
// bodies: the statements alone.
func sqlCode(s string) string {
	s = regexp.MustCompile(`(?s)\$\$.*?\$\$`).ReplaceAllString(s, "$$$$")
	return regexp.MustCompile(`--[^\n]*`).ReplaceAllString(s, "")
}

func TestSQLCode(t *testing.T) {
	t.Parallel()
	got := sqlCode("-- CREATE FUNCTION a\nCREATE FUNCTION b () AS $$\nCREATE FUNCTION c\n$$; -- d\nSELECT 1;")
	if want := "\nCREATE FUNCTION b () AS $$; \nSELECT 1;"; got != want {
		t.Errorf("sqlCode: %q, want %q", got, want)
	}
}

// TestMigrationsHoldNoFunctions: the numbered migrations change the
// schema alone. A function, a trigger or a view is created in its file in
// functions/, which is written after them, so a migration must not call
// one either: a new store has none while its migrations run.
func TestMigrationsHoldNoFunctions(t *testing.T) {
	t.Parallel()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	fns, err := functions()
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []*regexp.Regexp{
		createFunction,
		regexp.MustCompile(`(?i)\bcreate\s+(?:or\s+replace\s+)?(?:constraint\s+)?(?:trigger|view)\b`),
		regexp.MustCompile(`(?i)\balter\s+function\b`),
	}
	for _, f := range fns {
		forbidden = append(forbidden, regexp.MustCompile(`(?i)\b`+f.Name+`\s*\(`))
	}
	for _, m := range ms {
		code := sqlCode(m.SQL)
		for _, re := range forbidden {
			if found := re.FindString(code); found != "" {
				t.Errorf("migration %04d_%s has %q: functions, triggers and views live in functions/", m.Version, m.Name, found)
			}
		}
	}
}

// TestFunctionFilesDefineTheirFunction: each file of functions/ creates
// the one function it is named for (and, for a trigger function, the
// trigger that calls it) and nothing else, and no function is created by
// two files.
func TestFunctionFilesDefineTheirFunction(t *testing.T) {
	t.Parallel()
	fns, err := functions()
	if err != nil {
		t.Fatal(err)
	}
	if len(fns) == 0 {
		t.Fatal("no function files")
	}
	statement := regexp.MustCompile(`(?is)^create\s+(?:or\s+replace\s+)?(?:function\s+([a-z_][a-z0-9_]*)\s*\(|trigger\s.*\bexecute\s+function\s+([a-z_][a-z0-9_]*)\s*\()`)
	definedIn := map[string]string{}
	for _, f := range fns {
		code := sqlCode(f.SQL)
		var defines []string
		for _, m := range createFunction.FindAllStringSubmatch(code, -1) {
			name := strings.ToLower(m[1])
			defines = append(defines, name)
			if other, dup := definedIn[name]; dup {
				t.Errorf("function %s is created by %s.sql and %s.sql", name, other, f.Name)
			}
			definedIn[name] = f.Name
		}
		if len(defines) != 1 || defines[0] != f.Name {
			t.Errorf("%s.sql creates the functions %v, want %s alone", f.Name, defines, f.Name)
		}
		for _, s := range strings.Split(code, ";") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			m := statement.FindStringSubmatch(s)
			if m == nil || m[1] != f.Name && m[2] != f.Name {
				t.Errorf("%s.sql: %q is not the creation of %s or of a trigger that calls it", f.Name, s, f.Name)
			}
		}
	}
}
