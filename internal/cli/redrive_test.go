package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// redriveFile is a run of three tasks in dir: extract counts its runs in
// the file extracted, load fails (permanently) until the file ok is
// there, and report needs load.
func redriveFile(t *testing.T, dir string) string {
	return writeFile(t, fmt.Sprintf(`name: nightly
defaults:
  dir: %s
  retry: never
tasks:
  extract:
    run: echo x >> extracted
  load:
    run: |
      test -e ok || { echo "warehouse: table locked" >&2; exit 2; }
    needs: extract
  report:
    run: echo done > reported
    needs: load
`, dir))
}

// TestRedrive: grit redrive on a failed run sends back what did not
// succeed, with fresh attempts; worked again, the run ends SUCCESS
// without extract running twice, and grit wait follows it to its end.
// The redrive is in the audit log.
func TestRedrive(t *testing.T) {
	t.Parallel()
	dir, st := t.TempDir(), migratedStore(t)
	file := redriveFile(t, dir)
	code, out, errOut := grit(t, "run", "--json", "--store", st, file)
	if s := decodeSummary(t, out); code != exitFailed || s.State != task.Failed || byName(s)["report"].State != task.UpstreamFailed {
		t.Fatalf("the first run: exit %d, %s\n%s", code, out, errOut)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, errOut = grit(t, "redrive", "--store", st, "1")
	if code != 0 || !strings.Contains(out, "run 1 (nightly): RUNNING again; sent back to wait: tasks 2, 3") {
		t.Fatalf("grit redrive 1: exit %d\n%s%s", code, out, errOut)
	}
	type waited struct {
		code     int
		out, err string
	}
	wait := make(chan waited, 1)
	go func() {
		code, out, errOut := grit(t, "wait", "--json", "--store", st, "1")
		wait <- waited{code, out, errOut}
	}()
	code, out, errOut = grit(t, "run", "--resume", "1", "--json", "--store", st)
	s := decodeSummary(t, out)
	if code != 0 || s.State != task.Success {
		t.Fatalf("the redriven run: exit %d, %s\n%s", code, out, errOut)
	}
	if load := byName(s)["load"]; load.Attempt != 1 {
		t.Errorf("load succeeded at attempt %d after the redrive, want 1: its attempts start anew", load.Attempt)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "extracted")); string(b) != "x\n" {
		t.Errorf("extract ran %d times, want once: a task that succeeded is not run again", strings.Count(string(b), "x"))
	}
	if w := <-wait; w.code != 0 || decodeSummary(t, w.out).State != task.Success {
		t.Errorf("grit wait 1 during the redriven run: exit %d, %s%s", w.code, w.out, w.err)
	}
	log, err := openStore(t, st).(store.Auditor).AuditLog(context.Background(), 0, 0)
	if err != nil || len(log) != 1 || log[0].Action != "redrive" || log[0].Target != "run 1" || log[0].Count != 2 || !strings.HasPrefix(log[0].Who, "cli ") {
		t.Errorf("the audit log: %+v, %v; want the redrive of run 1, 2 tasks, by the cli", log, err)
	}
}

// TestRedriveRefused: a run still running, one that succeeded and one
// that is not there are refused, saying why, with exit status 2.
func TestRedriveRefused(t *testing.T) {
	t.Parallel()
	dir, st := t.TempDir(), migratedStore(t)
	if code, _, errOut := grit(t, "submit", "--store", st, redriveFile(t, dir)); code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	ok := writeFile(t, "name: fine\ntasks:\n  a: {run: \"true\"}\n")
	if code, _, errOut := grit(t, "run", "--store", st, ok); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	for run, want := range map[string]string{
		"1": "redrive run 1: it is RUNNING: only a run that has ended can be redriven (grit wait 1 waits for its end",
		"2": "redrive run 2: it succeeded: there is nothing to redrive",
		"9": "redrive: no run has id 9",
	} {
		code, out, errOut := grit(t, "redrive", "--store", st, run)
		if code != exitUsage || !strings.Contains(errOut, want) || out != "" {
			t.Errorf("grit redrive %s: exit %d, %q%q; want exit 2 saying %q", run, code, out, errOut, want)
		}
	}
	if got, err := openStore(t, st).GetRun(context.Background(), 1); err != nil || got.State != task.Running {
		t.Errorf("run 1 after the refused redrive: %+v, %v", got, err)
	}
}

// TestRedriveJSON: --json prints the run after and the tasks sent back.
func TestRedriveJSON(t *testing.T) {
	t.Parallel()
	dir, st := t.TempDir(), migratedStore(t)
	grit(t, "run", "--quiet", "--store", st, redriveFile(t, dir))
	code, out, errOut := grit(t, "redrive", "--json", "--store", st, "1")
	var r task.Redriven
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || r.Run.State != task.Running || len(r.Tasks) != 2 {
		t.Errorf("grit redrive --json: exit %d, %v: %s%s", code, err, out, errOut)
	}
}
