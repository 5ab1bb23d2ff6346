package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
)

// TestPauseCommands: grit pause and grit resume through the CLI, shown by
// grit pause, grit status --json and the audit log; bad input is a usage
// error that says what to give.
func TestPauseCommands(t *testing.T) {
	t.Parallel()
	st := migratedStore(t)
	if code, out, errOut := grit(t, "pause", "--store", st, "queue", "mail"); code != 0 || !strings.Contains(out, "queue mail: paused since") {
		t.Fatalf("grit pause queue mail: %d %q %q", code, out, errOut)
	}
	if code, out, _ := grit(t, "pause", "--store", st); code != 0 || !strings.Contains(out, "queue  mail") {
		t.Errorf("grit pause (list): %d %q", code, out)
	}
	code, out, _ := grit(t, "status", "--store", st, "--json")
	var r statusReport
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || len(r.Pauses) != 1 || r.Pauses[0].Name != "mail" || !strings.HasPrefix(r.Pauses[0].Who, "cli ") {
		t.Errorf("grit status --json: %d, pauses %+v", code, r.Pauses)
	}
	if code, out, _ := grit(t, "resume", "--store", st, "queue", "mail"); code != 0 || !strings.Contains(out, "queue mail: resumed") {
		t.Errorf("grit resume queue mail: %d %q", code, out)
	}
	if code, out, _ := grit(t, "resume", "--store", st, "queue", "mail"); code != 0 || !strings.Contains(out, "was not paused") {
		t.Errorf("grit resume of nothing: %d %q", code, out)
	}
	for _, args := range [][]string{{"pause", "queue"}, {"pause", "group", "g"}, {"resume", "kind", ""}} {
		code, _, errOut := grit(t, append(args, "--store", st)...)
		if code != 2 || !strings.Contains(errOut, "grit pause queue mail") && !strings.Contains(errOut, "grit pauses a queue, a kind or a tenant") && !strings.Contains(errOut, "1 to 200 characters") {
			t.Errorf("grit %v: exit %d, %q: want a usage error that says what to give", args, code, errOut)
		}
	}
	s := openStore(t, st)
	log, err := s.(store.Auditor).AuditLog(context.Background(), 0, 0)
	if err != nil || len(log) != 2 || log[0].Action != "resume" || log[1].Action != "pause" || log[1].Target != "queue mail" {
		t.Errorf("audit log %+v (%v), want the pause and the resume", log, err)
	}
}
