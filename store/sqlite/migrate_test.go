package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/grit-run/grit/task"
)

func TestMigrationsAreIdempotentOnReopen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "grit.db")
	for range 3 {
		s, err := OpenConfig(t.Context(), Config{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Enqueue(t.Context(), []task.NewTask{{Kind: "k"}}); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	s, err := OpenConfig(t.Context(), Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ms, _ := migrations()
	var applied, tasks int
	s.read.QueryRowContext(t.Context(), `SELECT count(*) FROM schema_migrations`).Scan(&applied)
	s.read.QueryRowContext(t.Context(), `SELECT count(*) FROM tasks`).Scan(&tasks)
	if applied != len(ms) || tasks != 3 {
		t.Errorf("after reopening: %d migrations recorded (want %d), %d tasks (want 3)", applied, len(ms), tasks)
	}
}

func TestConcurrentOpensMigrateOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "grit.db")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			s, err := OpenConfig(t.Context(), Config{Path: path})
			if err == nil {
				err = s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Errorf("open: %v", err)
		}
	}
}

func TestRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "grit.db")
	s, err := OpenConfig(t.Context(), Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.ExecContext(context.Background(), `INSERT INTO schema_migrations VALUES (9999, 'future', 0)`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, err = OpenConfig(t.Context(), Config{Path: path})
	if err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("open of a newer schema: %v, want a refusal", err)
	}
}

func TestDurablePragmas(t *testing.T) {
	t.Parallel()
	s, err := OpenConfig(t.Context(), Config{Path: filepath.Join(t.TempDir(), "grit.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var mode string
	var sync, fk int
	ctx := t.Context()
	s.w.conn.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode)
	s.w.conn.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync)
	s.w.conn.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk)
	if mode != "wal" || sync != 2 || fk != 1 {
		t.Errorf("journal_mode=%s synchronous=%d foreign_keys=%d, want wal, 2 (FULL), 1", mode, sync, fk)
	}
}
