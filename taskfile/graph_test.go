package taskfile_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/grit-run/grit/taskfile"
)

// dag is a bigger graph: a diamond (fetch -> parse, enrich -> merge), a
// fan-out and a fan-in, a second root and an edge that skips a level.
const dag = `name: dag
tasks:
  fetch:  {run: x}
  rates:  {run: x}
  parse:  {run: x, needs: fetch}
  enrich: {run: x, needs: [fetch, rates]}
  merge:  {run: x, needs: [parse, enrich]}
  eu:     {run: x, needs: merge}
  us:     {run: x, needs: merge}
  asia:   {run: x, needs: [merge, rates]}
  report: {run: x, needs: [eu, us, asia, fetch]}
`

func TestNeedsDAG(t *testing.T) {
	t.Parallel()
	f, err := taskfile.Parse("dag.yaml", []byte(dag))
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[string][]string)
	for _, tk := range f.Tasks {
		got[tk.Name] = tk.Needs
	}
	want := map[string][]string{
		"fetch": nil, "rates": nil,
		"parse": {"fetch"}, "enrich": {"fetch", "rates"}, "merge": {"parse", "enrich"},
		"eu": {"merge"}, "us": {"merge"}, "asia": {"merge", "rates"},
		"report": {"eu", "us", "asia", "fetch"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("needs = %v, want %v", got, want)
	}
}

func TestNeedsCycles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change string // a line replaced in dag
		with   string
		want   []string
	}{
		{
			name:   "3-cycle inside the DAG",
			change: "  fetch:  {run: x}",
			with:   "  fetch:  {run: x, needs: merge}",
			want:   []string{"dag.yaml:3: cycle: fetch -> merge -> parse -> fetch"},
		},
		{
			name:   "long cycle through the fan-in",
			change: "  rates:  {run: x}",
			with:   "  rates:  {run: x, needs: report}",
			want:   []string{"dag.yaml:4: cycle: rates -> report -> asia -> rates"},
		},
		{
			name:   "two cycles, one error each",
			change: "  us:     {run: x, needs: merge}",
			with:   "  us:     {run: x, needs: [merge, us2]}\n  us2: {run: x, needs: us}\n  x1: {run: x, needs: x2}\n  x2: {run: x, needs: x1}",
			want: []string{
				"dag.yaml:9: cycle: us -> us2 -> us",
				"dag.yaml:11: cycle: x1 -> x2 -> x1",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := strings.Replace(dag, tt.change, tt.with, 1)
			_, err := taskfile.Parse("dag.yaml", []byte(file))
			if err == nil {
				t.Fatal("Parse succeeded")
			}
			errs := errorsOf(t, err)
			if len(errs) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(tt.want), err)
			}
			for i, e := range errs {
				if got := fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg); !strings.HasPrefix(got, tt.want[i]+" (") {
					t.Errorf("error %d = %s, want %s (…)", i, got, tt.want[i])
				}
			}
		})
	}
}

// TestNeedsLongChain checks that a long chain of needs, and a cycle through
// all of it, are handled without deep recursion.
func TestNeedsLongChain(t *testing.T) {
	t.Parallel()
	const n = 20000
	var b strings.Builder
	b.WriteString("name: chain\ntasks:\n  t0: {run: x, needs: t" + fmt.Sprint(n-1) + "}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  t%d: {run: x, needs: t%d}\n", i, i-1)
	}
	_, err := taskfile.Parse("chain.yaml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "chain.yaml:3: cycle: t0 -> t19999 -> t19998 -> t19997 -> t19996 -> t19995 -> t19994 -> t19993 -> t19992 -> … -> t1 -> t0 (") {
		t.Fatalf("Parse error = %.200v", err)
	}

	file := strings.Replace(b.String(), ", needs: t"+fmt.Sprint(n-1), "", 1)
	f, err := taskfile.Parse("chain.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tasks) != n {
		t.Errorf("%d tasks, want %d", len(f.Tasks), n)
	}
}
