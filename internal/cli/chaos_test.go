package cli

import (
	"strings"
	"testing"

	"github.com/grit-run/grit/store/postgres/pgtest"
)

// TestChaosShortRun runs grit chaos for 40 seconds against the local
// PostgreSQL (a schema of its own): three workers under load, a fault
// about every three seconds; every invariant must hold.
func TestChaosShortRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the chaos run takes a minute; it runs without -short")
	}
	dsn := pgtest.WithSchema(pgtest.NewSchema(t)) // fails under CI=true when PostgreSQL is unreachable
	code, out, errOut := grit(t, "chaos", "--store", dsn, "--for", "40s", "--seed", "7", "--every", "3s", "--rate", "30", "--settle", "60s", "--dir", t.TempDir())
	t.Logf("grit chaos:\n%s", out)
	if code != 0 || !strings.Contains(out, "all held") {
		t.Fatalf("grit chaos exited %d:\n%s\n%s", code, out, lastLines(errOut, 30))
	}
}

// TestChaosRefusesSQLite: the fleet needs a shared PostgreSQL store.
func TestChaosRefusesSQLite(t *testing.T) {
	t.Parallel()
	code, _, errOut := grit(t, "chaos", "--store", "sqlite:"+t.TempDir()+"/grit.db", "--for", "1s")
	if code != exitUsage || !strings.Contains(errOut, "want a PostgreSQL DSN") {
		t.Errorf("exit %d, stderr %q; want %d and a message asking for a PostgreSQL DSN", code, errOut, exitUsage)
	}
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(ls[max(len(ls)-n, 0):], "\n")
}
