package gen

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/grit-run/grit/retry"
)

func TestParseRetry(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Retry{
		" 5s":                         {Policy: "5s"},
		" 10 5s 10m":                  {Policy: "10 5s 10m"},
		"\t3  1s 1m catch refund":     {Policy: "3 1s 1m", Catch: "refund"},
		" 3 1s explicit_only catch x": {Policy: "3 1s explicit_only", Catch: "x"},
		" never catch dlq.notify":     {Policy: "never", Catch: "dlq.notify"},
	} {
		got, err := ParseRetry(in)
		if err != nil || got != want {
			t.Errorf("ParseRetry(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
}

// FuzzParseRetry: whatever the text, ParseRetry does not panic, and what
// it accepts is a policy retry.Parse accepts and a kind the directive can
// be written back with.
func FuzzParseRetry(f *testing.F) {
	for _, s := range []string{" 5s", " 10 5s 10m catch refund", " catch", " 5s catch", " catch a b", " never transient=5s catch x", " 3 1s catch a\"b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRetry(s)
		if err != nil {
			if err.Error() == "" {
				t.Error("empty error")
			}
			return
		}
		if _, err := retry.Parse(r.Policy); err != nil {
			t.Errorf("ParseRetry(%q) accepted policy %q that retry.Parse refuses: %v", s, r.Policy, err)
		}
		back := " " + r.Policy
		if r.Catch != "" {
			if checkKind(r.Catch) != nil {
				t.Errorf("ParseRetry(%q) accepted catch kind %q", s, r.Catch)
			}
			back += " catch " + r.Catch
		}
		if again, err := ParseRetry(back); err != nil || again != r {
			t.Errorf("ParseRetry(%q) = %+v; written back as %q it is %+v, %v", s, r, back, again, err)
		}
		if strings.Contains(r.Policy, "catch") {
			t.Errorf("ParseRetry(%q): policy %q keeps a catch", s, r.Policy)
		}
	})
}

// FuzzKindOf: a Go identifier's kind is a valid kind, without doubled or
// edge underscores that the name did not have.
func FuzzKindOf(f *testing.F) {
	for _, s := range []string{"ChargeCard", "HTTPFetch", "ParseV2", "a", "userID"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k := KindOf(s)
		if s != "" && isASCIIIdent(s) && checkKind(k) != nil {
			t.Errorf("KindOf(%q) = %q, not a valid kind", s, k)
		}
		if !strings.Contains(s, "__") && strings.Contains(k, "__") {
			t.Errorf("KindOf(%q) = %q doubles an underscore", s, k)
		}
	})
}

func isASCIIIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// FuzzGenerate puts any directive on a handler: generation does not
// panic, and what it accepts is Go that parses.
func FuzzGenerate(f *testing.F) {
	for _, s := range []string{"retry 5s", "retry 3 1s 1m catch a", "handler x", "handler a\"b", "retry \x00", "retries 1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n\r") {
			return
		}
		dir := writePkg(t, map[string]string{"a.go": "package p\n\nimport \"context\"\n\n//grit:" + line +
			"\nfunc A(context.Context, int) error { return nil }\n\n//grit:handler a\nfunc B(context.Context, int) error { return nil }\n"})
		files, err := Generate([]string{dir})
		if err != nil {
			return
		}
		if _, err := parser.ParseFile(token.NewFileSet(), FileName, files[0].Content, 0); err != nil {
			t.Errorf("directive %q: generated Go that does not parse: %v\n%s", line, err, files[0].Content)
		}
	})
}
