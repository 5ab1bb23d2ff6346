package sqlite

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
)

// TestAuditIsAppendOnly: the audit table refuses to change or lose an
// entry, whoever asks: an entry read is an entry written.
func TestAuditIsAppendOnly(t *testing.T) {
	t.Parallel()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "grit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e, err := s.Audit(t.Context(), store.AuditEntry{Who: "local", Action: "replay", Target: "task 1", Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`UPDATE audit SET who = 'someone else' WHERE id = ?`, `DELETE FROM audit WHERE id = ?`} {
		if _, err := s.w.conn.ExecContext(t.Context(), q, e.ID); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: error %v, want the log's refusal", q, err)
		}
	}
	if es, err := s.AuditLog(t.Context(), 0, 0); err != nil || len(es) != 1 || es[0] != e {
		t.Errorf("log %+v (%v), want only %+v, unchanged", es, err, e)
	}
}
