package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"strings"

	"github.com/grit-run/grit/store"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one embedded schema change.
type migration = store.Migration

// migrations lists the embedded migrations in version order.
func migrations() ([]migration, error) { return store.Migrations(migrationFS, "migrations") }

// migrate applies the migrations the database lacks, all in one BEGIN
// IMMEDIATE transaction (db is opened with _txlock=immediate): a second
// process opening the same file waits, then finds them applied.
func migrate(ctx context.Context, db *sql.DB) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback()
	applied, err := appliedVersions(ctx, tx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := checkNotNewer(applied, ms); err != nil {
		return err
	}
	for _, m := range ms {
		if applied[m.Version] {
			continue
		}
		if err := apply(ctx, tx, m); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// bookkeepingSQL creates the table that records the migrations applied,
// each with the time, in unix microseconds.
const bookkeepingSQL = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL,
	applied_at INTEGER NOT NULL
);
`

// recordSQL records m as applied, now.
func recordSQL(m migration) string {
	return fmt.Sprintf("INSERT INTO schema_migrations (version, name, applied_at) VALUES (%d, '%s', %s);\n",
		m.Version, strings.ReplaceAll(m.Name, "'", "''"), nowMicros)
}

// nowMicros is the time now in unix microseconds, in SQLite's SQL.
const nowMicros = "CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)"

func appliedVersions(ctx context.Context, tx *sql.Tx) (map[int]bool, error) {
	if _, err := tx.ExecContext(ctx, bookkeepingSQL); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	applied := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		applied[v] = true
	}
	return applied, rows.Err()
}

// checkNotNewer refuses a database migrated by a newer grit: this one would
// not know its schema.
func checkNotNewer(applied map[int]bool, ms []migration) error {
	known := 0
	if len(ms) > 0 {
		known = ms[len(ms)-1].Version
	}
	for v := range applied {
		if v > known {
			return fmt.Errorf("migrate: the database has schema version %d, newer than this grit knows (%d): upgrade grit", v, known)
		}
	}
	return nil
}

func apply(ctx context.Context, tx *sql.Tx, m migration) error {
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("migrate: %04d_%s: %w", m.Version, m.Name, err)
	}
	if _, err := tx.ExecContext(ctx, recordSQL(m)); err != nil {
		return fmt.Errorf("migrate: record %04d_%s: %w", m.Version, m.Name, err)
	}
	return nil
}

// checkSchema checks, without writing, that the database is a grit store
// with exactly the embedded migrations applied.
func checkSchema(ctx context.Context, db *sql.DB, path string) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	var n int
	err = db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&n)
	if isNotADB(err) || err == nil && n == 0 {
		return notGrit(path)
	}
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	rows, err := db.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	defer rows.Close()
	applied := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return fmt.Errorf("sqlite: open %s: %w", path, err)
		}
		applied[v] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	return store.CheckSchema(path, applied, ms)
}
