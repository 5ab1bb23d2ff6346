package postgres

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed functions/*.sql
var functionFS embed.FS

// function is the current text of one of grit's SQL functions, from
// functions/NAME.sql: it creates the function NAME and, for a trigger
// function, its trigger. The numbered migrations hold no function: a
// function's text changes in its one file, and every store gets it on its
// next migration.
type function struct {
	Name string
	SQL  string
}

// functions lists the embedded functions in name order.
func functions() ([]function, error) {
	files, err := fs.Glob(functionFS, "functions/*.sql")
	if err != nil {
		return nil, err
	}
	fns := make([]function, 0, len(files))
	for _, f := range files {
		body, err := fs.ReadFile(functionFS, f)
		if err != nil {
			return nil, err
		}
		fns = append(fns, function{Name: strings.TrimSuffix(path.Base(f), ".sql"), SQL: string(body)})
	}
	return fns, nil
}

// functionsSum identifies a set of function texts: a schema records the
// sum of those it was last given, in schema_functions.
func functionsSum(fns []function) string {
	h := sha256.New()
	for _, f := range fns {
		fmt.Fprintf(h, "%s\x00%s\x00", f.Name, f.SQL)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// writeFunctions gives the schema these function texts, in the migration's
// transaction, unless it has them already: a fleet opening the store at
// once writes them once, and the processes that follow find them. They
// are written again, whatever the sum, after a numbered migration ran,
// since one may have dropped what a file creates (a table's trigger goes
// with its table).
//
// The texts the schema has are those of the last grit that wrote them,
// newer or older: unlike the numbered migrations, which only go forward,
// a set of functions cannot tell whether it is newer than another.
func writeFunctions(ctx context.Context, tx pgx.Tx, schema string, fns []function, migrated bool) error {
	ident := pgx.Identifier{schema}.Sanitize()
	sum := functionsSum(fns)
	var have string
	err := tx.QueryRow(ctx, `SELECT hash FROM `+ident+`.schema_functions`).Scan(&have)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("migrate: functions: %w", err)
	}
	if have == sum && !migrated {
		return nil
	}
	names := make([]string, len(fns))
	for i, f := range fns {
		names[i] = f.Name
	}
	if err := dropFunctions(ctx, tx, schema, names); err != nil {
		return fmt.Errorf("migrate: functions: %w", err)
	}
	for _, f := range fns {
		if _, err := tx.Exec(ctx, f.SQL); err != nil {
			return fmt.Errorf("migrate: functions/%s.sql: %w", f.Name, err)
		}
	}
	if _, err := tx.Exec(ctx, recordFunctionsSQL(sum)); err != nil {
		return fmt.Errorf("migrate: record functions: %w", err)
	}
	return nil
}

// recordFunctionsSQL records, in grit's schema (the search_path), that
// the functions of the sum were written.
func recordFunctionsSQL(sum string) string {
	return "INSERT INTO schema_functions (one, hash) VALUES (true, " + quote(sum) + ")\n" +
		"\tON CONFLICT (one) DO UPDATE SET hash = excluded.hash, applied_at = now();\n"
}

// dropFunctionsSQL lists the statements that drop the schema's functions
// of the names $2, with whatever arguments and result an earlier grit
// gave them (CREATE OR REPLACE can change neither), and first the
// triggers that call them, which the functions' files create again.
// Anything else that depends on one of them makes its DROP fail, and the
// migration with it, rather than go with it.
const dropFunctionsSQL = `
SELECT d.stmt FROM (
	SELECT 1 AS step, format('DROP TRIGGER %I ON %s', t.tgname, t.tgrelid::regclass) AS stmt
	FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
	WHERE p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = $1) AND p.proname = ANY ($2)
		AND NOT t.tgisinternal
	UNION ALL
	SELECT 2, format('DROP FUNCTION %s', p.oid::regprocedure)
	FROM pg_proc p
	WHERE p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = $1) AND p.proname = ANY ($2)
) d
ORDER BY d.step`

func dropFunctions(ctx context.Context, tx pgx.Tx, schema string, names []string) error {
	rows, err := tx.Query(ctx, dropFunctionsSQL, schema, names)
	if err != nil {
		return err
	}
	drops, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, d := range drops {
		if _, err := tx.Exec(ctx, d); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
	}
	return nil
}
