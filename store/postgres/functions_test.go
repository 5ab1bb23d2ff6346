package postgres_test

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/task"
)

// functionFiles names the files of functions/, each the function it
// creates.
func functionFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("functions", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no function files: %v", err)
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = strings.TrimSuffix(filepath.Base(f), ".sql")
	}
	return names
}

// functionOIDs are the schema's functions, each name with the oids of its
// versions: a function written again has a new oid.
func functionOIDs(t *testing.T, ctx context.Context, schema string) map[string][]uint32 {
	t.Helper()
	rows, err := admin(t).Query(ctx, `SELECT proname::text, array_agg(oid::int8 ORDER BY oid) FROM pg_proc
		WHERE pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = $1) GROUP BY proname`, schema)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]uint32{}
	var name string
	var oids []int64
	_, err = pgx.ForEachRow(rows, []any{&name, &oids}, func() error {
		for _, o := range oids {
			got[name] = append(got[name], uint32(o))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// recordedSum is the sum of the functions the schema records.
func recordedSum(t *testing.T, ctx context.Context, schema string) string {
	t.Helper()
	var sum string
	if err := admin(t).QueryRow(ctx, `SELECT hash FROM `+schema+`.schema_functions`).Scan(&sum); err != nil {
		t.Fatal(err)
	}
	return sum
}

// TestFunctionsWrittenOnce: a migrated schema has each function of
// functions/ once, and a fleet migrating it again at once (goroutines,
// each a session, and processes) leaves them as they are.
func TestFunctionsWrittenOnce(t *testing.T) {
	ctx := bounded(t)
	schema := newSchema(t)
	dsn := withSchema(schema)
	if err := postgres.Migrate(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	before := functionOIDs(t, ctx, schema)
	if got, want := slices.Sorted(maps.Keys(before)), functionFiles(t); !slices.Equal(got, want) {
		t.Fatalf("the schema's functions are %v, want those of functions/ %v", got, want)
	}
	for name, oids := range before {
		if len(oids) != 1 {
			t.Errorf("function %s exists %d times", name, len(oids))
		}
	}
	want, err := postgres.FunctionsSum()
	if err != nil {
		t.Fatal(err)
	}
	if got := recordedSum(t, ctx, schema); got != want {
		t.Errorf("the schema records the functions %s, want %s", got, want)
	}

	var procs []*exec.Cmd
	for range 2 {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestMigrateHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), envMigrateDSN+"="+dsn)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if err := postgres.Migrate(ctx, dsn); err != nil {
				t.Errorf("migrate: %v", err)
			}
		})
	}
	wg.Go(func() {
		if s, err := postgres.OpenConfig(ctx, postgres.Config{DSN: testDSN(), Schema: schema}); err != nil {
			t.Errorf("open: %v", err)
		} else {
			s.Close()
		}
	})
	wg.Wait()
	for _, p := range procs {
		if err := p.Wait(); err != nil {
			t.Errorf("migrating process: %v", err)
		}
	}
	if after := functionOIDs(t, ctx, schema); !maps.EqualFunc(before, after, slices.Equal) {
		t.Errorf("the functions were written again: %v, then %v", before, after)
	}
}

// TestFunctionsRewrittenWhenTheirTextDiffers: a schema whose functions
// another grit wrote (here a claim_tasks that claims nothing) gets this
// grit's again on migrate, though no numbered migration is new; a Store
// open all along, as a worker of the other grit is, then claims through
// them.
func TestFunctionsRewrittenWhenTheirTextDiffers(t *testing.T) {
	t.Parallel()
	ctx := bounded(t)
	schema := newSchema(t)
	s := openIn(t, schema)
	enqueueN(t, s, 1)
	db := admin(t)
	if _, err := db.Exec(ctx, `CREATE OR REPLACE FUNCTION `+schema+`.claim_tasks (worker text, lease_us bigint, lim bigint,
			queues text[], kinds text[], skip_groups text[], only_group text, skip_queues text[], skip_tenants text[], only_tenant text, stamp_lim bigint)
		RETURNS SETOF `+schema+`.claimed_task LANGUAGE plpgsql AS $$ BEGIN RETURN; END $$`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `UPDATE `+schema+`.schema_functions SET hash = 'another grit'`); err != nil {
		t.Fatal(err)
	}
	req := store.ClaimRequest{Worker: "w", Limit: 10, Lease: time.Minute}
	if got, err := s.Claim(ctx, req); err != nil || len(got) != 0 {
		t.Fatalf("claim through the other grit's claim_tasks: %v (%v), want nothing", got, err)
	}
	if err := postgres.Migrate(ctx, withSchema(schema)); err != nil {
		t.Fatal(err)
	}
	want, err := postgres.FunctionsSum()
	if err != nil {
		t.Fatal(err)
	}
	if got := recordedSum(t, ctx, schema); got != want {
		t.Errorf("the schema records the functions %s, want %s", got, want)
	}
	got, err := s.Claim(ctx, req)
	if err != nil || len(got) != 1 {
		t.Fatalf("claim after the functions were written again: %v (%v), want the task", got, err)
	}
	if errs, err := s.Finish(ctx, []store.Finish{{TaskID: got[0].ID, Token: got[0].LeaseToken, State: task.Success}}); err != nil || errs[0] != nil {
		t.Fatalf("finish: %v %v", err, errs)
	}
}

// TestFunctionsReplacedWhateverTheirSignature: functions an older grit
// left with other arguments or another result (which CREATE OR REPLACE
// cannot change), and a trigger on one, are replaced by this grit's; a
// function of another name in the schema is left alone.
func TestFunctionsReplacedWhateverTheirSignature(t *testing.T) {
	t.Parallel()
	ctx := bounded(t)
	schema := newSchema(t)
	versions, err := postgres.Versions()
	if err != nil {
		t.Fatal(err)
	}
	if err := postgres.MigrateThrough(ctx, admin(t), schema, versions[len(versions)-1], false); err != nil {
		t.Fatal(err)
	}
	err = pgx.BeginFunc(ctx, admin(t), func(tx pgx.Tx) error {
		for _, q := range []string{
			`SET LOCAL search_path TO ` + schema,
			// due_tasks as 0001 made it, claim_tasks as 0010 did.
			`CREATE FUNCTION due_tasks (lim bigint, queues text[], kinds text[])
				RETURNS TABLE (id bigint, priority integer, next_at timestamptz) LANGUAGE sql
				AS $$ SELECT id, priority, next_at FROM tasks LIMIT lim $$`,
			`CREATE FUNCTION claim_tasks (worker text, lease_us bigint, lim bigint, queues text[], kinds text[],
				skip_groups text[], only_group text, skip_queues text[], skip_tenants text[], only_tenant text, stamp_lim bigint)
				RETURNS SETOF tasks LANGUAGE plpgsql AS $$ BEGIN RETURN; END $$`,
			`CREATE FUNCTION audit_append_only () RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`,
			`CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE ON audit FOR EACH ROW EXECUTE FUNCTION audit_append_only()`,
			`CREATE FUNCTION keep_me () RETURNS integer LANGUAGE sql AS 'SELECT 1'`,
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s := openIn(t, schema)
	oids := functionOIDs(t, ctx, schema)
	for _, name := range append(functionFiles(t), "keep_me") {
		if len(oids[name]) != 1 {
			t.Errorf("function %s exists %d times, want once", name, len(oids[name]))
		}
	}
	enqueueN(t, s, 1)
	if got, err := s.Claim(ctx, store.ClaimRequest{Worker: "w", Limit: 10, Lease: time.Minute}); err != nil || len(got) != 1 {
		t.Errorf("claim: %v (%v), want the task", got, err)
	}
	if _, err := s.Audit(ctx, store.AuditEntry{Who: "op", Action: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin(t).Exec(ctx, `DELETE FROM `+schema+`.audit`); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Errorf("delete from the audit log: %v, want it refused as append-only", err)
	}
}

// TestFunctionDependentStopsTheMigration: a view of the operator's on one
// of grit's functions makes writing the functions fail, naming it, and the
// migration change nothing, rather than drop the view with the function.
func TestFunctionDependentStopsTheMigration(t *testing.T) {
	t.Parallel()
	ctx := bounded(t)
	schema := newSchema(t)
	openIn(t, schema)
	db := admin(t)
	for _, q := range []string{
		`CREATE VIEW ` + schema + `.next_token AS SELECT ` + schema + `.new_lease_token()`,
		`UPDATE ` + schema + `.schema_functions SET hash = 'another grit'`,
	} {
		if _, err := db.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	before := functionOIDs(t, ctx, schema)
	err := postgres.Migrate(ctx, withSchema(schema))
	if err == nil || !strings.Contains(err.Error(), "new_lease_token") || !strings.Contains(err.Error(), "depend") {
		t.Errorf("migrate: %v, want it refused, naming the function others depend on", err)
	}
	if after := functionOIDs(t, ctx, schema); !maps.EqualFunc(before, after, slices.Equal) {
		t.Errorf("the failed migration changed the functions: %v, then %v", before, after)
	}
	if got := recordedSum(t, ctx, schema); got != "another grit" {
		t.Errorf("the failed migration recorded the functions %s", got)
	}
}

// TestNewerSchemaKeepsItsFunctions: a grit that refuses a schema migrated
// by a newer grit leaves the newer grit's functions as they are.
func TestNewerSchemaKeepsItsFunctions(t *testing.T) {
	t.Parallel()
	ctx := bounded(t)
	schema := newSchema(t)
	if err := postgres.Migrate(ctx, withSchema(schema)); err != nil {
		t.Fatal(err)
	}
	db := admin(t)
	for _, q := range []string{
		`INSERT INTO ` + schema + `.schema_migrations (version, name) VALUES (9999, 'future')`,
		`UPDATE ` + schema + `.schema_functions SET hash = 'newer grit'`,
	} {
		if _, err := db.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	before := functionOIDs(t, ctx, schema)
	if err := postgres.Migrate(ctx, withSchema(schema)); err == nil || !strings.Contains(err.Error(), "upgrade grit") {
		t.Fatalf("migrate of a newer schema: %v, want a refusal", err)
	}
	if after := functionOIDs(t, ctx, schema); !maps.EqualFunc(before, after, slices.Equal) {
		t.Errorf("the refused migration changed the functions: %v, then %v", before, after)
	}
	if got := recordedSum(t, ctx, schema); got != "newer grit" {
		t.Errorf("the refused migration recorded the functions %s", got)
	}
}

// TestFunctionsWrittenAfterANewMigration: the functions are written again
// after a numbered migration runs, even when their text is the same, so
// that a trigger lost with its table (here dropped by hand) is back.
func TestFunctionsWrittenAfterANewMigration(t *testing.T) {
	t.Parallel()
	ctx := bounded(t)
	schema := newSchema(t)
	versions, err := postgres.Versions()
	if err != nil {
		t.Fatal(err)
	}
	if err := postgres.MigrateThrough(ctx, admin(t), schema, versions[len(versions)-2], true); err != nil {
		t.Fatal(err)
	}
	if _, err := admin(t).Exec(ctx, `DROP TRIGGER audit_append_only ON `+schema+`.audit`); err != nil {
		t.Fatal(err)
	}
	s := openIn(t, schema)
	if _, err := s.Audit(ctx, store.AuditEntry{Who: "op", Action: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin(t).Exec(ctx, `DELETE FROM `+schema+`.audit`); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Errorf("delete from the audit log: %v, want it refused as append-only", err)
	}
}

// TestClaimsGoOnWhileFunctionsAreWritten: while a migration has dropped
// and created the functions again and not yet committed, a Store open on
// the schema claims through the functions it had, without waiting for
// the migration; once it commits, through the new ones.
func TestClaimsGoOnWhileFunctionsAreWritten(t *testing.T) {
	t.Parallel()
	ctx := bounded(t)
	schema := newSchema(t)
	s := openIn(t, schema)
	enqueueN(t, s, 2)
	before := functionOIDs(t, ctx, schema)
	tx, err := admin(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+schema); err != nil {
		t.Fatal(err)
	}
	if err := postgres.WriteFunctions(ctx, tx, schema); err != nil {
		t.Fatal(err)
	}
	req := store.ClaimRequest{Worker: "w", Limit: 1, Lease: time.Minute}
	during, err := s.Claim(ctx, req)
	if err != nil || len(during) != 1 {
		t.Fatalf("claim during the migration: %v (%v), want a task", during, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	afterwards, err := s.Claim(ctx, req)
	if err != nil || len(afterwards) != 1 {
		t.Fatalf("claim after the migration: %v (%v), want a task", afterwards, err)
	}
	after := functionOIDs(t, ctx, schema)
	if maps.EqualFunc(before, after, slices.Equal) {
		t.Error("the functions were not written again")
	}
	for _, c := range append(during, afterwards...) {
		if errs, err := s.Finish(ctx, []store.Finish{{TaskID: c.ID, Token: c.LeaseToken, State: task.Success}}); err != nil || errs[0] != nil {
			t.Fatalf("finish %d: %v %v", c.ID, err, errs)
		}
	}
}
