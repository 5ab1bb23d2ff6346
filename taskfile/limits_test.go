package taskfile_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/grit-run/grit/rate"
	"github.com/grit-run/grit/taskfile"
)

const limitsFile = `name: sync
tasks:
  pull: {run: ./pull, tenant: acme, group: crm}
limits:
  tenant acme: {rate: 5/s, burst: 10}
  group crm: {max: 4, rate: 300/m}
  kind exec: {rate: 0.5/s}
`

func TestLimits(t *testing.T) {
	t.Parallel()
	f, err := taskfile.Parse("sync.yaml", []byte(limitsFile))
	if err != nil {
		t.Fatal(err)
	}
	want := []taskfile.Limit{
		{Scope: "tenant", Name: "acme", Rate: rate.Limit{Rate: 5, Burst: 10}, Line: 5},
		{Scope: "group", Name: "crm", Max: 4, Rate: rate.Limit{Rate: 5}, Line: 6},
		{Scope: "kind", Name: "exec", Rate: rate.Limit{Rate: 0.5}, Line: 7},
	}
	if !reflect.DeepEqual(f.Limits, want) {
		t.Errorf("limits %+v, want %+v", f.Limits, want)
	}
}

const limitsHead = "name: x\ntasks:\n  a: {run: x}\nlimits:\n"

var invalidLimitTests = []struct {
	name string
	yaml string
	line int
	msg  string
}{
	{"a list", "name: x\ntasks:\n  a: {run: x}\nlimits: [tenant acme]\n", 4, "limits is a list (it takes a mapping"},
	{"no name", limitsHead + "  tenant: {rate: 5/s}\n", 5, `limit "tenant": want a scope and a name`},
	{"bad scope", limitsHead + "  run r: {rate: 5/s}\n", 5, "the scope queue, kind, group or tenant"},
	{"bad name", limitsHead + "  tenant a/b: {rate: 5/s}\n", 5, `"a/b" is not a valid name`},
	{"a scalar", limitsHead + "  tenant acme: 5\n", 5, `limit "tenant acme" is "5" (a limit is a mapping`},
	{"bad rate", limitsHead + "  tenant acme: {rate: 5}\n", 5, "want calls per second"},
	{"bad burst", limitsHead + "  tenant acme: {rate: 5/s, burst: 0.5}\n", 5, "burst 0.5 is out of range"},
	{"burst alone", limitsHead + "  tenant acme: {burst: 5}\n", 5, "burst goes with rate"},
	{"a kind's max", limitsHead + "  kind k: {max: 5}\n", 5, "a kind has no limit of running attempts"},
	{"nothing", limitsHead + "  tenant acme: {}\n", 5, "sets nothing"},
	{"unknown key", limitsHead + "  tenant acme: {rat: 5/s}\n", 5, `unknown key "rat" (did you mean "rate"?)`},
	{"max zero", limitsHead + "  queue q: {max: 0}\n", 5, "max 0 is out of range"},
}

func TestLimitsInvalid(t *testing.T) {
	t.Parallel()
	for _, tt := range invalidLimitTests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := taskfile.Parse("test.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", f.Limits)
			}
			for _, e := range errorsOf(t, err) {
				if e.Line == tt.line && strings.Contains(e.Msg, tt.msg) {
					if !strings.HasSuffix(e.Msg, ")") {
						t.Errorf("error %q does not read taskfile PATH:LINE: what (how to fix)", e)
					}
					return
				}
			}
			t.Errorf("no error on line %d with %q; got:\n%v", tt.line, tt.msg, err)
		})
	}
}
