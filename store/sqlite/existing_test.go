package sqlite_test

import (
	"bytes"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// TestOpenExistingCreatesNothing: where there is no grit store, opening an
// existing one fails with ErrNotExist and leaves the disk as it was.
func TestOpenExistingCreatesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notDB := filepath.Join(dir, "notes.txt")
	os.WriteFile(notDB, []byte("not a database, but long enough to have a header's worth of bytes in it"), 0o644)
	otherApp := filepath.Join(dir, "app.db")
	db, err := sql.Open("sqlite", otherApp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE things (id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o644)

	for _, path := range []string{filepath.Join(dir, "no", "such", "grit.db"), filepath.Join(dir, "grit.db"), notDB, otherApp, empty, dir} {
		before := snapshot(t, dir)
		_, err := store.OpenExisting(t.Context(), "sqlite:"+path)
		if !errors.Is(err, store.ErrNotExist) || !strings.Contains(err.Error(), "no grit store at "+path) {
			t.Errorf("%s: %v, want ErrNotExist saying no grit store at %s", path, err, path)
		}
		if after := snapshot(t, dir); after != before {
			t.Errorf("%s: the directory changed:\nbefore %s\nafter  %s", path, before, after)
		}
	}
}

// snapshot is the names, sizes and contents of the files under dir.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b bytes.Buffer
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		b.WriteString(p + ";")
		if !d.IsDir() {
			data, _ := os.ReadFile(p)
			b.Write(data)
		}
		return nil
	})
	return b.String()
}

// TestOpenExistingChecksTheSchema: a store with migrations missing or
// beyond this driver's is refused, saying what to do, and not migrated.
func TestOpenExistingChecksTheSchema(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "grit.db")
	s, err := sqlite.Open(t.Context(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var newest int
	var newestName string
	db.QueryRow(`SELECT version, name FROM schema_migrations ORDER BY version DESC LIMIT 1`).Scan(&newest, &newestName)
	var firstName string
	db.QueryRow(`SELECT name FROM schema_migrations WHERE version = 1`).Scan(&firstName)

	for _, tt := range []struct {
		name, change, undo, says string
		args                     []any
	}{
		{"older", `DELETE FROM schema_migrations WHERE version = ?1`, `INSERT INTO schema_migrations VALUES (?1, ?2, 0)`,
			"older than this grit needs", []any{newest, newestName}},
		{"gap", `DELETE FROM schema_migrations WHERE version = ?1`, `INSERT INTO schema_migrations VALUES (?1, ?2, 0)`,
			"lacks schema migrations [1]: run grit migrate", []any{1, firstName}},
		{"newer", `INSERT INTO schema_migrations VALUES (?1, ?2, 0)`, `DELETE FROM schema_migrations WHERE version = ?1`,
			"has schema version 9999, newer than this grit knows", []any{9999, "future"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := db.Exec(tt.change, tt.args...); err != nil {
				t.Fatal(err)
			}
			defer db.Exec(tt.undo, tt.args...)
			var count int
			db.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&count)
			_, err = sqlite.OpenExisting(t.Context(), "sqlite:"+path)
			if !errors.Is(err, store.ErrSchemaVersion) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("open: %v, want ErrSchemaVersion saying %q", err, tt.says)
			}
			var after int
			db.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&after)
			if after != count {
				t.Errorf("%d migrations recorded after the open, %d before: it migrated", after, count)
			}
		})
	}
	s2, err := store.OpenExisting(t.Context(), "sqlite:"+path)
	if err != nil {
		t.Fatalf("open of an up-to-date store: %v", err)
	}
	defer s2.Close()
	if _, err := s2.Enqueue(t.Context(), []task.NewTask{{Kind: "k"}}); err != nil {
		t.Errorf("enqueue on an existing store: %v", err)
	}
}
