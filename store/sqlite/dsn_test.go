package sqlite_test

import (
	"strings"
	"testing"

	"github.com/grit-run/grit/store/sqlite"
)

func TestParseDSN(t *testing.T) {
	t.Parallel()
	cases := []struct{ dsn, want string }{
		{"sqlite:grit.db", "grit.db"},
		{"sqlite:path/to/grit.db", "path/to/grit.db"},
		{"sqlite:///var/lib/grit.db", "/var/lib/grit.db"},
		{"sqlite://grit.db", "grit.db"},
		{"SQLite:grit.db", "grit.db"},
		{"/var/lib/grit.db", "/var/lib/grit.db"},
		{"grit.db", "grit.db"},
		{`C:\grit\grit.db`, `C:\grit\grit.db`},
	}
	for _, c := range cases {
		got, err := sqlite.ParseDSN(c.dsn)
		if err != nil || got != c.want {
			t.Errorf("ParseDSN(%q) = %q, %v; want %q", c.dsn, got, err, c.want)
		}
	}
}

func TestBadDSNSaysWhatToWrite(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{"", "sqlite:", "postgres://localhost/grit", "sqlite::memory:", "sqlite:grit.db?mode=ro"} {
		_, err := sqlite.Open(t.Context(), dsn)
		if err == nil {
			t.Errorf("Open(%q) succeeded", dsn)
			continue
		}
		if !strings.Contains(err.Error(), "sqlite:path/to/grit.db") {
			t.Errorf("Open(%q): %v; want the error to show sqlite:path/to/grit.db", dsn, err)
		}
	}
}
