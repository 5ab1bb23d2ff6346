package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
)

// TestDLQItems: a process task sets one row of ten aside and succeeds;
// grit dlq list shows the row beside the dead letters, by fingerprint;
// grit dlq items replay runs it as a task of the kind its task file
// names, audited; drop deletes what is left.
func TestDLQItems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := tempStore(t)
	file := filepath.Join(dir, "import.yaml")
	err := os.WriteFile(file, []byte(`name: import
tasks:
  load:
    run: |
      for n in 1 2 3 4 5 6 7 8 9 10; do
        case $n in
          4) echo "{\"item\":{\"row\":$n},\"error\":\"row $n: bad date\"}" >> "$GRIT_QUARANTINE_FILE";;
          7) echo "{\"item\":{\"row\":$n},\"error\":\"row $n: no account 1007\"}" >> "$GRIT_QUARANTINE_FILE";;
        esac
      done
      echo '{"seen":10}' >> "$GRIT_QUARANTINE_FILE"
    quarantine: {kind: import-row, max_share: 0.2}
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := gritExec(t, dir, "run", "--json", "--store", st, file)
	if code != 0 {
		t.Fatalf("run: exit %d, %s %s", code, out, errOut)
	}
	code, out, _ = gritExec(t, dir, "dlq", "list", "--store", st)
	if code != 0 || !strings.Contains(out, "QUARANTINED ITEMS") || !strings.Contains(out, "row 4: bad date") || !strings.Contains(out, "no account") {
		t.Fatalf("dlq list: exit %d:\n%s", code, out)
	}
	code, out, _ = gritExec(t, dir, "dlq", "list", "--json", "--store", st)
	var groups []quarantineGroup
	if err := json.Unmarshal([]byte(out), &groups); code != 0 || err != nil || len(groups) != 2 || !groups[0].Quarantined {
		t.Fatalf("dlq list --json: exit %d, %v:\n%s", code, err, out)
	}
	var date quarantineGroup
	for _, g := range groups {
		if strings.Contains(g.Error, "bad date") {
			date = g
		}
	}
	if date.Count != 1 || len(date.Items) != 1 || string(date.Items[0].Item) != `{"row":4}` || date.Items[0].ReplayKind != "import-row" {
		t.Fatalf("the bad date group %+v", date)
	}
	code, out, errOut = gritExec(t, dir, "dlq", "items", "replay", "--json", "--fingerprint", date.Fingerprint, "--store", st)
	var r dlqItemsResult
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || len(r.Replayed) != 1 || r.Dropped != 1 {
		t.Fatalf("replay: exit %d, %v: %s %s", code, err, out, errOut)
	}
	code, out, _ = gritExec(t, dir, "task", "--json", itoa(r.Replayed[0]), "--store", st)
	if code != 0 || !strings.Contains(out, `"kind":"import-row"`) || !strings.Contains(out, `"args":{"row":4}`) {
		t.Errorf("the replayed task: exit %d: %s", code, out)
	}
	log, err := openStore(t, st).(store.Auditor).AuditLog(context.Background(), 0, 0)
	if err != nil || len(log) != 1 || log[0].Action != "quarantine replay" || log[0].Target != "fingerprint "+date.Fingerprint || log[0].Count != 1 {
		t.Errorf("audit log %+v, %v", log, err)
	}
	code, _, errOut = gritExec(t, dir, "dlq", "items", "drop", "--store", st)
	if code != exitUsage || !strings.Contains(errOut, "name the items by id, or give --fingerprint") {
		t.Errorf("drop naming nothing: exit %d, %q", code, errOut)
	}
	code, out, _ = gritExec(t, dir, "dlq", "items", "drop", itoa(groups[0].Items[0].ID), itoa(groups[1].Items[0].ID), "--store", st)
	if code != 0 || out != "dropped 1 items\n" {
		t.Errorf("drop of one left and one replayed: exit %d, %q", code, out)
	}
}
