package postgres_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/task"
)

// envMigrateDSN makes the test binary a helper process that migrates the
// DSN it names (see TestMigrateHelperProcess).
const envMigrateDSN = "GRIT_TEST_MIGRATE_DSN"

// TestMigrateHelperProcess is not a test: run by TestConcurrentMigrations
// as a separate process, it migrates once and exits.
func TestMigrateHelperProcess(t *testing.T) {
	dsn := os.Getenv(envMigrateDSN)
	if dsn == "" {
		return
	}
	if err := postgres.Migrate(bounded(t), dsn); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentMigrations migrates one new schema from two processes and
// four goroutines (each a session of its own) at once: every one succeeds
// and each migration is applied once.
func TestConcurrentMigrations(t *testing.T) {
	schema := newSchema(t)
	dsn := withSchema(schema)
	ctx := bounded(t)
	var procs []*exec.Cmd
	for range 2 {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestMigrateHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), envMigrateDSN+"="+dsn)
		procs = append(procs, cmd)
	}
	for _, p := range procs {
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if err := postgres.Migrate(ctx, dsn); err != nil {
				t.Errorf("migrate: %v", err)
			}
		})
	}
	wg.Wait()
	for _, p := range procs {
		if err := p.Wait(); err != nil {
			t.Errorf("migrating process: %v", err)
		}
	}
	var applied int
	if err := admin(t).QueryRow(ctx, `SELECT count(*) FROM `+schema+`.schema_migrations`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("migrations", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no migration files: %v", err)
	}
	if applied != len(files) {
		t.Errorf("%d migrations recorded, want each of the %d once", applied, len(files))
	}
	s := openIn(t, schema)
	if _, err := s.Enqueue(ctx, []task.NewTask{{Kind: "k"}}); err != nil {
		t.Errorf("enqueue on the migrated schema: %v", err)
	}
}

// TestReopenKeepsData: opening a migrated schema again applies nothing and
// loses nothing.
func TestReopenKeepsData(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	ctx := bounded(t)
	for range 3 {
		s, err := postgres.OpenConfig(ctx, postgres.Config{DSN: testDSN(), Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Enqueue(ctx, []task.NewTask{{Kind: "k"}})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	var tasks int
	if err := admin(t).QueryRow(ctx, `SELECT count(*) FROM `+schema+`.tasks`).Scan(&tasks); err != nil || tasks != 3 {
		t.Errorf("%d tasks (%v) after three opens, want 3", tasks, err)
	}
}

func TestRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	ctx := bounded(t)
	if err := postgres.Migrate(ctx, withSchema(schema)); err != nil {
		t.Fatal(err)
	}
	if _, err := admin(t).Exec(ctx, `INSERT INTO `+schema+`.schema_migrations (version, name) VALUES (9999, 'future')`); err != nil {
		t.Fatal(err)
	}
	_, err := postgres.OpenConfig(ctx, postgres.Config{DSN: testDSN(), Schema: schema})
	if err == nil || !strings.Contains(err.Error(), "newer") || !strings.Contains(err.Error(), "upgrade grit") {
		t.Errorf("open of a newer schema: %v, want a refusal saying to upgrade grit", err)
	}
	if err := postgres.Migrate(ctx, withSchema(schema)); err == nil {
		t.Error("migrate of a newer schema succeeded")
	}
}
