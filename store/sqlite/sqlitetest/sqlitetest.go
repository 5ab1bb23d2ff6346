// Package sqlitetest gives tests a SQLite store of their own: a file in the
// test's temporary directory holding an empty grit database at the schema
// the driver migrates to.
//
// The file is a copy of one database migrated once per test binary. A new
// file would be migrated by every test that opens it, and under the race
// detector the migrations are most of what a short test costs; the tests
// of the migrations themselves (package sqlite's) open new files.
package sqlitetest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/grit-run/grit/store/sqlite"
)

var (
	once  sync.Once
	image []byte
	err   error
)

// migrated is the content of an empty database that sqlite.Open has
// migrated and closed, made on first use.
func migrated() ([]byte, error) {
	once.Do(func() {
		var dir string
		if dir, err = os.MkdirTemp("", "sqlitetest"); err != nil {
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "grit.db")
		var s *sqlite.Store
		if s, err = sqlite.Open(context.Background(), "sqlite:"+path); err != nil {
			return
		}
		if err = s.Close(); err != nil {
			return
		}
		// The last connection's close checkpoints the WAL into the file
		// and removes it: the file alone is the database.
		if _, werr := os.Stat(path + "-wal"); werr == nil {
			err = fmt.Errorf("%s-wal is still there after Close", path)
			return
		}
		image, err = os.ReadFile(path)
	})
	return image, err
}

// Path writes a new, empty, migrated database in t.TempDir() and returns
// its path.
func Path(t testing.TB) string {
	t.Helper()
	b, err := migrated()
	if err != nil {
		t.Fatalf("sqlitetest: migrate the database tests copy: %v", err)
	}
	path := filepath.Join(t.TempDir(), "grit.db")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// DSN is Path as a DSN: "sqlite:" and the path.
func DSN(t testing.TB) string {
	t.Helper()
	return "sqlite:" + Path(t)
}

// Refuse makes the database at path refuse to record the success of the
// tasks of kind (of every kind when kind is ""): a trigger raises
// message (RAISE(ABORT)) when such a task's row would become SUCCESS, as
// a broken constraint would. It returns what lets them again.
func Refuse(t testing.TB, path, kind, message string) (allow func()) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	name := fmt.Sprintf("refuse_%d", refusals.Add(1))
	when := `NEW.state = 'SUCCESS' AND OLD.state <> 'SUCCESS'`
	if kind != "" {
		when += ` AND NEW.kind = ` + literal(kind)
	}
	q := `CREATE TRIGGER ` + name + ` BEFORE UPDATE ON tasks FOR EACH ROW WHEN ` + when +
		` BEGIN SELECT RAISE(ABORT, ` + literal(message) + `); END`
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("sqlitetest: refuse the successes of %q: %v", kind, err)
	}
	return func() {
		if _, err := db.Exec(`DROP TRIGGER ` + name); err != nil {
			t.Errorf("sqlitetest: let the successes of %q again: %v", kind, err)
		}
	}
}

var refusals atomic.Int64 // names the triggers of Refuse

// literal quotes s as an SQL string literal.
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
