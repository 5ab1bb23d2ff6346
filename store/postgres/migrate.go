package postgres

import (
	"context"
	"embed"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/grit-run/grit/store"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one embedded schema change.
type migration = store.Migration

// migrations lists the embedded migrations in version order.
func migrations() ([]migration, error) { return store.Migrations(migrationFS, "migrations") }

// Migrate creates the schema a DSN names (its schema parameter, else
// DefaultSchema) and applies the migrations it lacks, without opening a
// Store: for `grit migrate` and deployments that migrate before starting
// workers. It is idempotent, safe to run from several processes at once,
// and refuses a schema migrated by a newer grit.
func Migrate(ctx context.Context, dsn string) error {
	p, _, err := Config{DSN: dsn}.connect(ctx)
	if err != nil {
		return err
	}
	pc, schema := p.pool, p.schema
	conn, err := pgx.ConnectConfig(ctx, pc.ConnConfig)
	if err != nil {
		return fmt.Errorf("postgres: migrate %s: %w", describe(pc.ConnConfig), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := migrateSchema(ctx, conn, schema); err != nil {
		return fmt.Errorf("postgres: migrate %s: %w", describe(pc.ConnConfig), err)
	}
	return nil
}

type beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// migrateSchema applies the migrations the schema lacks, then writes the
// functions, all in one transaction that first takes an advisory lock on
// the schema's name: a second process migrating at once waits, then finds
// them applied. The migrations run with search_path set to the schema.
func migrateSchema(ctx context.Context, db beginner, schema string) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	fns, err := functions()
	if err != nil {
		return err
	}
	return migrateTo(ctx, db, schema, ms, fns)
}

// migrateTo applies the migrations ms the schema lacks and writes the
// functions fns; with fns nil it leaves the functions as they are, for
// the tests that make a schema of an older version.
func migrateTo(ctx context.Context, db beginner, schema string, ms []migration, fns []function) error {
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		ident := pgx.Identifier{schema}.Sanitize()
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey(schema)); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+ident+`;
			SET LOCAL search_path TO `+ident+`;
			`+bookkeepingSQL); err != nil {
			return fmt.Errorf("migrate: create schema %s: %w", schema, err)
		}
		applied, err := appliedVersions(ctx, tx, ident)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if err := checkNotNewer(schema, applied, ms); err != nil {
			return err
		}
		migrated := false
		for _, m := range ms {
			if !applied[m.Version] {
				if err := apply(ctx, tx, m); err != nil {
					return err
				}
				migrated = true
			}
		}
		if fns == nil {
			return nil
		}
		return writeFunctions(ctx, tx, schema, fns, migrated)
	})
}

// bookkeepingSQL creates the tables that record, in grit's schema (the
// search_path), the migrations applied and the functions' texts written.
const bookkeepingSQL = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    integer     PRIMARY KEY,
	name       text        NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS schema_functions (
	one        boolean     PRIMARY KEY DEFAULT true CHECK (one),
	hash       text        NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
);
`

// lockKey is the advisory lock of a schema's migrations: the same in every
// process.
func lockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("grit migrate " + schema))
	return int64(h.Sum64())
}

func appliedVersions(ctx context.Context, tx pgx.Tx, ident string) (map[int]bool, error) {
	rows, err := tx.Query(ctx, `SELECT version FROM `+ident+`.schema_migrations`)
	if err != nil {
		return nil, err
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, err
	}
	applied := make(map[int]bool, len(vs))
	for _, v := range vs {
		applied[int(v)] = true
	}
	return applied, nil
}

// checkNotNewer refuses a schema migrated by a newer grit: this one would
// not know its tables.
func checkNotNewer(schema string, applied map[int]bool, ms []migration) error {
	known := 0
	if len(ms) > 0 {
		known = ms[len(ms)-1].Version
	}
	for v := range applied {
		if v > known {
			return fmt.Errorf("migrate: schema %s has version %d, newer than this grit knows (%d): upgrade grit", schema, v, known)
		}
	}
	return nil
}

// recordSQL records m as applied, in grit's schema (the search_path).
func recordSQL(m migration) string {
	return fmt.Sprintf("INSERT INTO schema_migrations (version, name) VALUES (%d, %s);\n", m.Version, quote(m.Name))
}

// quote is s as an SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func apply(ctx context.Context, tx pgx.Tx, m migration) error {
	if _, err := tx.Exec(ctx, m.SQL); err != nil {
		return fmt.Errorf("migrate: %04d_%s: %w", m.Version, m.Name, err)
	}
	if _, err := tx.Exec(ctx, recordSQL(m)); err != nil {
		return fmt.Errorf("migrate: record %04d_%s: %w", m.Version, m.Name, err)
	}
	return nil
}

// checkSchema checks, reading only, that grit's schema is there with
// exactly the embedded migrations applied. It does not compare the
// functions' texts (schema_functions): whichever grit last migrated the
// schema wrote them, and no read calls them.
func checkSchema(ctx context.Context, db *pgxpool.Pool, schema, where string) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	at := fmt.Sprintf("%s (schema %s)", where, schema)
	ident := pgx.Identifier{schema}.Sanitize()
	var found bool
	if err := db.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, ident+".schema_migrations").Scan(&found); err != nil {
		return fmt.Errorf("postgres: open %s: %w", where, err)
	}
	if !found {
		return &store.OpenError{Kind: store.ErrNotExist, Err: fmt.Errorf("no grit store at %s", at)}
	}
	rows, err := db.Query(ctx, `SELECT version FROM `+ident+`.schema_migrations`)
	if err != nil {
		return fmt.Errorf("postgres: open %s: %w", at, err)
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return fmt.Errorf("postgres: open %s: %w", at, err)
	}
	applied := make(map[int]bool, len(vs))
	for _, v := range vs {
		applied[int(v)] = true
	}
	return store.CheckSchema(at, applied, ms)
}
