package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"

	_ "modernc.org/sqlite" // the "sqlite" driver, which grit's store uses too
)

// sqliteSettings are the durability settings of every SQLite system: grit's
// store sets them itself (store/sqlite), the others here. synchronous=FULL
// fsyncs the WAL at every commit, so a job completed survives a power
// failure, as on PostgreSQL with fsync and synchronous_commit on.
const sqliteSettings = "journal_mode=WAL, synchronous=FULL"

// sqlitePragmas sets sqliteSettings on every connection, and waits for
// another connection's write rather than fail at once (River's worker and
// insert client, and the completed count, each have their own).
const sqlitePragmas = "_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)"

// openSQLite opens a pool of one connection on the database file path,
// with sqliteSettings: one writer at a time is all SQLite allows, and
// River's SQLite driver asks for it. query is added to the pragmas
// (e.g. _txlock=immediate).
func openSQLite(ctx context.Context, path, query string) (*sql.DB, error) {
	dsn := path + "?" + sqlitePragmas
	if query != "" {
		dsn += "&" + query
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// files makes a fresh database file for each workload of each SQLite
// system, in one temporary folder, removed at the end of the run.
type files struct {
	dir string
	n   atomic.Int64
}

func newFiles() (*files, error) {
	dir, err := os.MkdirTemp("", "queuecmp-")
	if err != nil {
		return nil, fmt.Errorf("a folder for the SQLite files: %w", err)
	}
	return &files{dir: dir}, nil
}

// create names a database file that does not exist yet; the system
// creates it when it opens.
func (f *files) create(sys, workload string) (string, error) {
	return filepath.Join(f.dir, fmt.Sprintf("%s_%s_%d.db", sys, workload, f.n.Add(1))), nil
}

// drop removes a database file and those SQLite keeps beside it.
func (f *files) drop(path string) error {
	var errs []error
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (f *files) removeAll() error { return os.RemoveAll(f.dir) }

// sqliteVersion is the version of the SQLite every SQLite system runs
// (modernc.org/sqlite, one for the whole program).
func sqliteVersion(ctx context.Context) (string, error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return "", err
	}
	defer db.Close()
	var v string
	if err := db.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&v); err != nil {
		return "", fmt.Errorf("sqlite_version: %w", err)
	}
	return v, nil
}
