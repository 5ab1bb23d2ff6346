package engine

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/grit-run/grit/task"
)

// TestExecQuarantine: a process task sets rows aside by writing them to
// the file GRIT_QUARANTINE_FILE names, and goes on; past its max share it
// fails; a line written wrong fails it, the good lines kept.
func TestExecQuarantine(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	start(t, testConfig(st))
	tests := []struct {
		name  string
		shell string
		pol   *task.ExecQuarantine
		state task.State
		items int
		err   string
	}{
		{"one row of ten", `echo '{"item":{"row":4},"error":"row 4: bad date"}' >> "$GRIT_QUARANTINE_FILE"; echo '{"seen":10}' >> "$GRIT_QUARANTINE_FILE"`,
			&task.ExecQuarantine{Kind: "import.row", MaxShare: 0.1}, task.Success, 1, ""},
		{"past its share", `for n in 4 8; do echo "{\"item\":$n,\"error\":\"row $n: bad date\"}"; done >> "$GRIT_QUARANTINE_FILE"; echo '{"seen":10}' >> "$GRIT_QUARANTINE_FILE"`,
			&task.ExecQuarantine{MaxShare: 0.1}, task.Failed, 2, "set aside 2 of the 10 items"},
		{"past its max", `for n in 4 8 12; do echo "{\"item\":$n,\"error\":\"row $n: bad date\"}"; done >> "$GRIT_QUARANTINE_FILE"`,
			&task.ExecQuarantine{Max: 2}, task.Failed, 3, "more than the 2 it tolerates"},
		{"a line written wrong", `echo '{"item":1,"error":"bad"}' >> "$GRIT_QUARANTINE_FILE"; echo 'row 2 is bad' >> "$GRIT_QUARANTINE_FILE"`,
			nil, task.Failed, 1, quarantineLine2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk := enqueue(t, st, task.NewTask{Kind: task.KindExec, Policy: "3 10ms", Args: execArgs(t, task.Exec{Shell: tt.shell, Quarantine: tt.pol})})
			done := waitState(t, st, tk.ID, tt.state)
			if done.Attempt != 1 || !strings.Contains(done.LastError, tt.err) {
				t.Errorf("%s after %d attempts (%q), want %s after 1 (%q)", done.State, done.Attempt, done.LastError, tt.state, tt.err)
			}
			items, err := st.ListQuarantined(context.Background(), task.QuarantineFilter{TaskID: tk.ID})
			if err != nil || len(items) != tt.items {
				t.Fatalf("quarantined %+v, %v; want %d", items, err, tt.items)
			}
			if tt.pol != nil && items[0].ReplayKind != tt.pol.Kind || items[0].Fingerprint == "" {
				t.Errorf("item %+v", items[0])
			}
		})
	}
}

const quarantineLine2 = QuarantineFileEnv + " line 2"

func TestParseQuarantine(t *testing.T) {
	t.Parallel()
	items, seen, err := parseQuarantine(strings.NewReader("{\"item\":{\"a\":1},\"error\":\"x 12\"}\n\n{\"seen\":5}\n{\"seen\":2}\n"))
	if err != nil || len(items) != 1 || seen != 7 || string(items[0].Item) != `{"a":1}` || items[0].Fingerprint == "" {
		t.Errorf("parsed %+v, %d, %v", items, seen, err)
	}
	for _, bad := range []string{`{"item":1}`, `{"error":"x"}`, `{"item":1,"error":""}`, `{"seen":-1}`, `{"seen":1,"item":1,"error":"x"}`, `{"itme":1,"error":"x"}`, `[1]`, `{`} {
		if _, _, err := parseQuarantine(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%s: %v, want an error naming line 1", bad, err)
		}
	}
	huge := `{"item":"` + strings.Repeat("x", task.MaxQuarantinedItem) + `","error":"x"}`
	if _, _, err := parseQuarantine(strings.NewReader(huge)); err == nil {
		t.Error("an item over the bound: accepted")
	}
}

func FuzzParseQuarantine(f *testing.F) {
	f.Add([]byte("{\"item\":{\"a\":1},\"error\":\"x\"}\n{\"seen\":3}\n"))
	f.Add([]byte("{\"item\":null,\"error\":\"x\"}"))
	f.Add([]byte("garbage\n{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		items, seen, err := parseQuarantine(bytes.NewReader(b))
		if seen < 0 {
			t.Errorf("seen %d", seen)
		}
		for _, it := range items {
			if it.Error == "" || len(it.Item) == 0 || len(it.Item) > task.MaxQuarantinedItem {
				t.Errorf("item %+v accepted", it)
			}
		}
		_ = err
	})
}
