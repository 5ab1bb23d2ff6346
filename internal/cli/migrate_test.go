package cli

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/grit-run/grit/store/postgres/pgtest"
)

// needBinary is the path of a program a test runs: when it is missing the
// test fails under CI=true (scripts/test installs it) and is skipped
// loudly elsewhere.
func needBinary(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed: CI needs it (scripts/test installs it with apt-get)", name)
	}
	t.Skipf("\n*** SKIPPED: %s is not installed (scripts/test installs it with apt-get) ***", name)
	return ""
}

// oneTask is a task file of one process task that succeeds.
const oneTask = "name: one\ntasks:\n  a: {run: \"true\"}\n"

// runOneTask runs oneTask on the store, which must be at this grit's
// schema already (grit migrate --check says so first).
func runOneTask(t *testing.T, dsn string) {
	t.Helper()
	if code, out, errOut := grit(t, "migrate", "--check", "--store", dsn); code != 0 || !strings.Contains(out, "schema up to date") {
		t.Fatalf("migrate --check: exit %d: %s%s", code, out, errOut)
	}
	code, out, errOut := grit(t, "run", "--json", "--store", dsn, writeFile(t, oneTask))
	if code != 0 {
		t.Fatalf("run: exit %d: %s%s", code, out, errOut)
	}
	if s := decodeSummary(t, out); s.State != "SUCCESS" || len(s.Tasks) != 1 || s.Tasks[0].State != "SUCCESS" {
		t.Errorf("run: %+v", s)
	}
}

// TestMigrateSQLMakesASQLiteStore: what grit migrate --sql prints, applied
// by the sqlite3 program to a new file, is a store at this grit's schema,
// with the tables and indexes grit migrate makes, and runs a task.
func TestMigrateSQLMakesASQLiteStore(t *testing.T) {
	t.Parallel()
	sqlite3 := needBinary(t, "sqlite3")
	code, script, errOut := grit(t, "migrate", "--sql", "--driver", "sqlite")
	if code != 0 {
		t.Fatalf("migrate --sql: exit %d: %s", code, errOut)
	}
	path := filepath.Join(t.TempDir(), "script.db")
	cmd := exec.Command(sqlite3, "-bail", path)
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v\n%s", err, out)
	}
	made := migratedStore(t)
	if got, want := sqliteSchema(t, path), sqliteSchema(t, strings.TrimPrefix(made, "sqlite:")); got != want {
		t.Errorf("the script's schema:\n%s\nwant grit migrate's:\n%s", got, want)
	}
	runOneTask(t, "sqlite:"+path)
}

// sqliteSchema is the SQL of a database's tables, indexes and triggers.
func sqliteSchema(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT type, name, coalesce(sql, '') FROM sqlite_schema ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var typ, name, text string
		if err := rows.Scan(&typ, &name, &text); err != nil {
			t.Fatal(err)
		}
		b.WriteString(typ + " " + name + ": " + text + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if b.Len() == 0 {
		t.Fatalf("%s has no schema", path)
	}
	return b.String()
}

// TestMigrateSQLMakesAPostgresStore: what grit migrate --sql prints for a
// schema, applied by psql to a database without it, is a store at this
// grit's schema with the columns, indexes, constraints, triggers and
// functions grit migrate makes (and their recorded sum, so that grit
// rewrites none), and runs a task.
func TestMigrateSQLMakesAPostgresStore(t *testing.T) {
	t.Parallel()
	psql := needBinary(t, "psql")
	schema := pgtest.NewSchema(t)
	dsn := pgtest.WithSchema(schema)
	code, script, errOut := grit(t, "migrate", "--sql", "--store", dsn)
	if code != 0 {
		t.Fatalf("migrate --sql: exit %d: %s", code, errOut)
	}
	file := filepath.Join(t.TempDir(), "grit.sql")
	os.WriteFile(file, []byte(script), 0o644)
	cmd := exec.Command(psql, "-X", "-q", "--single-transaction", "-v", "ON_ERROR_STOP=1", "-d", pgtest.DSN(), "-f", file)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	other := pgtest.NewSchema(t)
	if code, _, errOut := grit(t, "migrate", "--store", pgtest.WithSchema(other)); code != 0 {
		t.Fatalf("migrate: exit %d: %s", code, errOut)
	}
	if got, want := pgSchema(t, schema), pgSchema(t, other); got != want {
		t.Errorf("the script's schema:\n%s\nwant grit migrate's:\n%s", got, want)
	}
	runOneTask(t, dsn)
}

// pgSchema describes a schema's objects, with its name written S.
func pgSchema(t *testing.T, schema string) string {
	t.Helper()
	rows, err := pgtest.Admin(t).Query(context.Background(), `
		SELECT format('column %s.%s %s %s null=%s', table_name, column_name, data_type, column_default, is_nullable)
			FROM information_schema.columns WHERE table_schema = $1
		UNION ALL SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = $1
		UNION ALL SELECT format('constraint %s %s', c.conname, pg_get_constraintdef(c.oid))
			FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = $1
		UNION ALL SELECT 'trigger ' || pg_get_triggerdef(g.oid)
			FROM pg_trigger g JOIN pg_class r ON r.oid = g.tgrelid JOIN pg_namespace n ON n.oid = r.relnamespace
			WHERE n.nspname = $1 AND NOT g.tgisinternal
		UNION ALL SELECT 'function ' || pg_get_functiondef(p.oid)
			FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1
		UNION ALL SELECT 'functions sum ' || hash FROM `+schema+`.schema_functions
		UNION ALL SELECT format('migration %s %s', version, name) FROM `+schema+`.schema_migrations
		ORDER BY 1`, schema)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		b.WriteString(strings.ReplaceAll(s, schema, "S") + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestMigrateCheck: grit migrate --check exits 0 on a store at this
// grit's schema, 1 naming the migrations a store lacks, 3 on a store of a
// newer grit and 2 where there is no store; and applies nothing.
func TestMigrateCheck(t *testing.T) {
	t.Parallel()
	dsn := migratedStore(t)
	if code, out, _ := grit(t, "migrate", "--check", "--json", "--store", dsn); code != 0 || !strings.Contains(out, `"up_to_date":true,"missing":[]`) {
		t.Errorf("up to date: exit %d: %s", code, out)
	}
	db, err := sql.Open("sqlite", strings.TrimPrefix(dsn, "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var newest int
	var name string
	if err := db.QueryRow(`SELECT version, name FROM schema_migrations ORDER BY version DESC LIMIT 1`).Scan(&newest, &name); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM schema_migrations WHERE version = ?`, newest); err != nil {
		t.Fatal(err)
	}
	for range 2 { // and again: --check applied nothing
		code, out, errOut := grit(t, "migrate", "--check", "--store", dsn)
		if code != exitFailed || !strings.Contains(out, "1 migrations missing") || !strings.Contains(out, name) || errOut != "" {
			t.Errorf("behind: exit %d: %q %q", code, out, errOut)
		}
	}
	if _, err := db.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 0), (99999, 'future', 0)`, newest, name); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := grit(t, "migrate", "--check", "--store", dsn); code != exitUnavailable || !strings.Contains(errOut, "newer than this grit knows") {
		t.Errorf("newer: exit %d: %s", code, errOut)
	}
	if code, _, errOut := grit(t, "migrate", "--check", "--store", tempStore(t)); code != exitUsage || !strings.Contains(errOut, "no grit store") {
		t.Errorf("no store: exit %d: %s", code, errOut)
	}
	if code, _, errOut := grit(t, "migrate", "--check", "--sql"); code != exitUsage || !strings.Contains(errOut, "not both") {
		t.Errorf("--check --sql: exit %d: %s", code, errOut)
	}
	if code, _, errOut := grit(t, "migrate", "--sql", "--json"); code != exitUsage || !strings.Contains(errOut, "not JSON") {
		t.Errorf("--sql --json: exit %d: %s", code, errOut)
	}
	if code, _, errOut := grit(t, "migrate", "--sql", "--driver", "mysql"); code != exitUsage || !strings.Contains(errOut, `no driver "mysql"`) {
		t.Errorf("--driver mysql: exit %d: %s", code, errOut)
	}
}
