package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/grit-run/grit/task"
)

// TestRunsListsFiltersAndPages: grit runs lists the runs newest first,
// by state and by name, a page at a time, and --json prints them.
func TestRunsListsFiltersAndPages(t *testing.T) {
	t.Parallel()
	st := tempStore(t)
	ok := writeFile(t, "name: ok\ntasks:\n  a: {run: \"true\"}\n")
	bad := writeFile(t, "name: bad\ntasks:\n  a: {run: \"exit 2\", permanent_on_exit: [2]}\n")
	okAgain := writeFile(t, "name: ok\ntasks:\n  b: {run: \"true\"}\n")
	for _, f := range []string{ok, bad, okAgain} {
		if code, _, errOut := grit(t, "run", "-q", "--json", "--store", st, f); code > 1 {
			t.Fatalf("run %s: exit %d: %s", f, code, errOut)
		}
	}
	runs := func(args ...string) []task.Run {
		t.Helper()
		code, out, errOut := grit(t, append([]string{"runs", "--json", "--store", st}, args...)...)
		var rs []task.Run
		if err := json.Unmarshal([]byte(out), &rs); code != 0 || err != nil {
			t.Fatalf("runs --json %v: exit %d, %v: %s %s", args, code, err, out, errOut)
		}
		return rs
	}
	ids := func(rs []task.Run) []int64 {
		var out []int64
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	if got := ids(runs()); !slices.Equal(got, []int64{3, 2, 1}) {
		t.Errorf("runs: %v, want 3, 2, 1", got)
	}
	if got := runs("--state", "failed"); len(got) != 1 || got[0].Name != "bad" || got[0].State != task.Failed {
		t.Errorf("runs --state failed: %+v, want run 2 (bad), FAILED", got)
	}
	if got := ids(runs("--name", "ok")); !slices.Equal(got, []int64{3, 1}) {
		t.Errorf("runs --name ok: %v, want 3, 1", got)
	}
	if got := ids(runs("--limit", "1", "--before", "3")); !slices.Equal(got, []int64{2}) {
		t.Errorf("runs --limit 1 --before 3: %v, want 2", got)
	}
	if got := runs("--name", "none"); got == nil || len(got) != 0 {
		t.Errorf("runs --name none: %v, want an empty array", got)
	}
	code, out, _ := grit(t, "runs", "--limit", "2", "--store", st)
	if code != 0 || !strings.Contains(out, "bad") || !strings.Contains(out, "FAILED") || !strings.Contains(out, "grit runs --before 2") {
		t.Errorf("runs --limit 2: exit %d:\n%s\nwant the runs and the command for the next page", code, out)
	}
	code, _, errOut := grit(t, "runs", "--state", "FIALED", "--store", st)
	wantUserError(t, "runs --state FIALED", code, errOut, exitUsage, "did you mean FAILED?")
}
