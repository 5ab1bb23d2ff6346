package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/fsm"
	"github.com/grit-run/grit/internal/machine"
	"github.com/grit-run/grit/store"
)

// order is a small machine: "note" is entered at once, "paid" runs a
// handler, anything else from idle is ignored.
var order = fsm.Machine{
	Name:    "order",
	Initial: "idle",
	States:  []fsm.State{{Name: "idle"}, {Name: "charging", Kind: "charge"}},
	Transitions: []fsm.Transition{
		{From: "idle", Event: "note", To: "idle"},
		{From: "idle", Event: "paid", To: "charging"},
	},
}

// orderInstance makes instance o-1 of order through the machine, so that
// it has history (bogus ignored, note entered) and a transition under
// way (paid), with shipped waiting behind it.
func orderInstance(t *testing.T, dsn string) {
	t.Helper()
	st := openStore(t, dsn)
	now := time.Now()
	for _, ev := range []string{"bogus", "note", "paid", "shipped"} {
		if _, err := machine.Send(context.Background(), st, &order, "order", "o-1", ev, nil, now); err != nil {
			t.Fatalf("send %s: %v", ev, err)
		}
	}
}

// TestFSMCommands: grit fsm send queues behind what waits and is
// audited; show and list read the instance; the read commands make no
// store.
func TestFSMCommands(t *testing.T) {
	t.Parallel()
	dsn := migratedStore(t)
	orderInstance(t, dsn)

	code, out, errOut := grit(t, "fsm", "send", "--store", dsn, "order", "o-1", "refund", "--payload", `{"cents": 5}`)
	if code != 0 || !strings.Contains(out, "event 5 (refund) queued") || !strings.Contains(out, "charging") ||
		strings.Index(out, "shipped") > strings.Index(out, "refund  ") || !strings.Contains(out, `{"cents": 5}`) {
		t.Fatalf("grit fsm send: %d %q %q", code, out, errOut)
	}
	file := filepath.Join(t.TempDir(), "p.json")
	if err := os.WriteFile(file, []byte(`{"note": "from a file"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := grit(t, "fsm", "send", "--store", dsn, "order", "o-2", "paid", "--payload", "@"+file); code != 0 || !strings.Contains(out, "from a file") {
		t.Errorf("grit fsm send --payload @FILE: %d %q %q", code, out, errOut)
	}

	code, out, errOut = grit(t, "fsm", "show", "--store", dsn, "order", "o-1")
	if code != 0 || !strings.Contains(out, "state:    idle") || !strings.Contains(out, "idle --paid--> charging (event 3, task ") ||
		!(strings.Index(out, "shipped") < strings.Index(out, "refund")) ||
		!(strings.Index(out, "note") < strings.Index(out, "bogus")) || !strings.Contains(out, "IGNORED") {
		t.Errorf("grit fsm show: %d %q %q, want idle entering charging, shipped then refund waiting, history newest first", code, out, errOut)
	}
	code, out, _ = grit(t, "fsm", "show", "--store", dsn, "order", "o-1", "--json")
	var got instanceJSON
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got.Machine != "order" || got.Key != "o-1" || got.State != "idle" ||
		got.Entering == nil || got.Entering.Task == 0 || len(got.Queue) != 2 || got.Queue[1].Event != "refund" || len(got.History) != 2 || got.Sent != 5 {
		t.Errorf("grit fsm show --json: %d %+v", code, got)
	}

	code, out, _ = grit(t, "fsm", "list", "--store", dsn)
	if code != 0 || !strings.Contains(out, "o-1") || !strings.Contains(out, "o-2") || !strings.Contains(out, "2: shipped refund") || !strings.Contains(out, "charging (task ") {
		t.Errorf("grit fsm list: %d %q", code, out)
	}
	code, out, _ = grit(t, "fsm", "list", "order", "--limit", "1", "--store", dsn)
	if code != 0 || !strings.Contains(out, "o-1") || strings.Contains(out, "o-2") || !strings.Contains(out, "grit fsm list order --after o-1") {
		t.Errorf("grit fsm list --limit 1: %d %q", code, out)
	}
	code, out, _ = grit(t, "fsm", "list", "order", "--after", "o-1", "--json", "--store", dsn)
	var page []instanceJSON
	if code != 0 || json.Unmarshal([]byte(out), &page) != nil || len(page) != 1 || page[0].Key != "o-2" || len(page[0].Queue) != 1 {
		t.Errorf("grit fsm list --after o-1 --json: %d %q", code, out)
	}

	log, err := openStore(t, dsn).(store.Auditor).AuditLog(context.Background(), 0, 0)
	if err != nil || len(log) != 2 || log[1].Action != "send" || log[1].Target != "instance order/o-1" || !strings.HasPrefix(log[1].Who, "cli ") {
		t.Errorf("audit log %+v (%v), want the two sends", log, err)
	}

	missing := filepath.Join(t.TempDir(), "none.db")
	for _, args := range [][]string{{"show", "order", "o-1"}, {"list"}} {
		if code, _, _ := grit(t, append([]string{"fsm", "--store", "sqlite:" + missing}, args...)...); code != 2 {
			t.Errorf("grit fsm %v on no store: exit %d, want 2", args, code)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("the read commands made a store: %v", err)
	}
}

// TestFSMUsageErrors: bad input exits 2 and says what to write.
func TestFSMUsageErrors(t *testing.T) {
	t.Parallel()
	dsn := migratedStore(t)
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"send", "a:b", "k", "e"}, `machine "a:b"`},
		{[]string{"send", "order", "", "e"}, "want 1 to 500 bytes"},
		{[]string{"send", "order", "k", "paid now"}, "e.g. grit fsm send order k paid"},
		{[]string{"send", "order", "k", "paid", "--payload", "{"}, "--payload"},
		{[]string{"send", "order", "k", "paid", "--payload", "@/nonexistent/p.json"}, "--payload"},
		{[]string{"send", "order", "k"}, "usage"},
		{[]string{"show", "order", "nope"}, "not found"},
		{[]string{"list", "--after", "o-1"}, "give the MACHINE"},
		{[]string{"list", "order", "--limit", "0"}, "want 1 to 1000"},
	} {
		code, _, errOut := grit(t, append([]string{"fsm", "--store", dsn}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.says) {
			t.Errorf("grit fsm %q: exit %d, %q; want 2 saying %q", c.args, code, errOut, c.says)
		}
	}
}
