package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grit-run/grit/store/postgres/pgtest"
)

// TestPayment runs the example on both stores: each order ends where its
// events lead, the authorize state's transient refusals are retried within
// its execution, and each card is charged once though its ledger write
// failed after the charge.
func TestPayment(t *testing.T) {
	t.Parallel()
	for name, dsn := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "grit.db") },
		"postgres": func(t *testing.T) string { return pgtest.WithSchema(pgtest.NewSchema(t)) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rep, err := run(context.Background(), dsn(t), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			for key, want := range map[string]string{"o-1": "captured", "o-2": "refunded", "o-3": "failed"} {
				if rep.States[key] != want {
					t.Errorf("order %s is %s, want %s", key, rep.States[key], want)
				}
			}
			for _, key := range []string{"o-1", "o-2"} {
				if rep.Authorizations[key] != 3 || rep.Charges[key] != 1 {
					t.Errorf("order %s: %d authorizations, %d charges; want 3 (two refused, retried in the execution) and 1", key, rep.Authorizations[key], rep.Charges[key])
				}
			}
			if h := strings.Join(rep.History["o-3"], "; "); !strings.Contains(h, "FAILED") || !strings.Contains(h, "capture: in failed, IGNORED") {
				t.Errorf("the declined order's history: %s", h)
			}
		})
	}
}
