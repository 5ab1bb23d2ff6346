package postgres

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Script is the SQL that makes grit's schema from nothing, as migrating a
// new schema does: the schema the DSN names (DefaultSchema for a dsn of
// ""), its bookkeeping tables, every numbered migration recorded as
// applied, and the functions with their sum, so that grit opens the
// result as a store at its schema and rewrites nothing. It connects to
// nothing. The SQL holds no transaction of its own: the tool that applies
// it (psql --single-transaction, goose, atlas, flyway) gives it one.
func Script(dsn string) (string, error) {
	schema := DefaultSchema
	if dsn != "" {
		var err error
		if schema, err = ParseDSN(dsn); err != nil {
			return "", err
		}
	}
	ms, err := migrations()
	if err != nil {
		return "", err
	}
	fns, err := functions()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	ident := pgx.Identifier{schema}.Sanitize()
	fmt.Fprintf(&b, "-- grit's PostgreSQL store in schema %s at schema version %d, as grit migrate makes it.\n", schema, ms[len(ms)-1].Version)
	b.WriteString("-- Apply it in one transaction to a database without this schema, e.g. psql --single-transaction -v ON_ERROR_STOP=1 -f FILE.\n\n")
	fmt.Fprintf(&b, "CREATE SCHEMA IF NOT EXISTS %s;\nSET search_path TO %s;\n\n%s", ident, ident, bookkeepingSQL)
	for _, m := range ms {
		fmt.Fprintf(&b, "\n-- migrations/%04d_%s.sql\n%s\n%s", m.Version, m.Name, strings.TrimRight(m.SQL, "\n"), recordSQL(m))
	}
	for _, f := range fns {
		fmt.Fprintf(&b, "\n-- functions/%s.sql\n%s\n", f.Name, strings.TrimRight(f.SQL, "\n"))
	}
	b.WriteString("\n" + recordFunctionsSQL(functionsSum(fns)))
	return b.String(), nil
}
