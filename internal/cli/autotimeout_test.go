package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A task file's timeout: auto reaches the store; grit task shows that the
// task asks for it, and the timeout a failed attempt ran under and why, in
// text and in JSON (a success keeps none: autotimeout.Keep).
func TestTaskShowsAutoTimeout(t *testing.T) {
	t.Parallel()
	st := tempStore(t)
	file := filepath.Join(t.TempDir(), "nightly.yaml")
	os.WriteFile(file, []byte("name: nightly\ntasks:\n  report: {run: \"exit 3\", timeout: auto, retry: never}\n"), 0o644)
	if code, out, errOut := grit(t, "run", "--json", "--store", st, file); code == 0 {
		t.Fatalf("run of a failing task: exit 0: %s %s", out, errOut)
	} else {
		id := itoa(byName(decodeSummary(t, out))["report"].ID)
		_, text, _ := grit(t, "task", id, "--store", st)
		for _, want := range []string{"auto (learned from its successful runs", "attempt 1: timeout 30m (auto: default, 0 runs so far)"} {
			if !strings.Contains(text, want) {
				t.Errorf("grit task: no %q in\n%s", want, text)
			}
		}
		_, js, _ := grit(t, "task", id, "--json", "--store", st)
		var v struct {
			Task     taskJSON
			Attempts []attemptJSON
		}
		if err := json.Unmarshal([]byte(js), &v); err != nil {
			t.Fatal(err)
		}
		if !v.Task.AutoTimeout || v.Task.TimeoutMS != 0 || len(v.Attempts) != 1 ||
			v.Attempts[0].TimeoutMS != 30*60*1000 || v.Attempts[0].TimeoutSource != "auto: default, 0 runs so far" {
			t.Errorf("grit task --json: %s", js)
		}
	}
}

// grit enqueue --timeout auto asks the server for an auto timeout.
func TestEnqueueAutoTimeout(t *testing.T) {
	t.Parallel()
	st := tempStore(t)
	addr, stop := startServer(t, st)
	defer stop()
	code, out, errOut := grit(t, "enqueue", "--kind", "report", "--timeout", "auto", "--json", "--server", addr)
	var v taskJSON
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || !v.AutoTimeout || v.TimeoutMS != 0 {
		t.Fatalf("enqueue --timeout auto: exit %d: %s %s", code, out, errOut)
	}
	if code, _, errOut := grit(t, "enqueue", "--kind", "report", "--timeout", "soon", "--server", addr); code != 2 || !strings.Contains(errOut, "or auto") {
		t.Errorf("enqueue --timeout soon: exit %d: %s", code, errOut)
	}
}

func TestParseAutoTimeouts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, err string }{
		{"", ""},
		{"factor=2.5, min-runs=5", ""},
		{"factor=0", "factor=0: want a positive number"},
		{"floor=soon", "floor=soon: want a positive duration"},
		{"min-runs=-1", "min-runs=-1: want a positive whole number"},
		{"floor=2h", "floor 2h above ceiling 1h"},
		{"flor=1m", `"flor": want KEY=VALUE pairs`},
	} {
		_, err := parseAutoTimeouts(c.in)
		if (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("parseAutoTimeouts(%q) = %v, want %q", c.in, err, c.err)
		}
	}
}
