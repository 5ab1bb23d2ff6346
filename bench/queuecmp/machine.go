package main

import (
	"context"
	"fmt"
	"runtime"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// machine is what the numbers were taken on: the PostgreSQL fields when
// a system ran on PostgreSQL, the SQLite ones when one ran on SQLite.
type machine struct {
	GOOS              string `json:"goos"`
	GOARCH            string `json:"goarch"`
	NumCPU            int    `json:"num_cpu"`
	GoVersion         string `json:"go_version"`
	PostgresVersion   string `json:"postgres_version,omitempty"`
	Fsync             string `json:"fsync,omitempty"`
	SynchronousCommit string `json:"synchronous_commit,omitempty"`
	// Autovacuum matters to every queue: without it, the index entries
	// of claimed and finished jobs stay until a VACUUM.
	Autovacuum    string `json:"autovacuum,omitempty"`
	SQLiteVersion string `json:"sqlite_version,omitempty"`
	// SQLiteSettings are the durability settings of every SQLite system.
	SQLiteSettings string `json:"sqlite_settings,omitempty"`
	// SQLiteFS is the file system the SQLite files were on: on tmpfs an
	// fsync costs nothing, and synchronous=FULL means little.
	SQLiteFS string `json:"sqlite_fs,omitempty"`
}

func readHost() machine {
	return machine{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, NumCPU: runtime.NumCPU(), GoVersion: runtime.Version()}
}

func readPostgres(ctx context.Context, pool *pgxpool.Pool, m *machine) error {
	for _, s := range []struct {
		name string
		dst  *string
	}{{"server_version", &m.PostgresVersion}, {"fsync", &m.Fsync}, {"synchronous_commit", &m.SynchronousCommit}, {"autovacuum", &m.Autovacuum}} {
		if err := pool.QueryRow(ctx, "SHOW "+s.name).Scan(s.dst); err != nil {
			return fmt.Errorf("show %s: %w", s.name, err)
		}
	}
	return nil
}

// readSQLite reads the SQLite version, and the file system of dir, where
// the SQLite files are.
func readSQLite(ctx context.Context, dir string, m *machine) (err error) {
	m.SQLiteSettings, m.SQLiteFS = sqliteSettings, fsType(dir)
	m.SQLiteVersion, err = sqliteVersion(ctx)
	return err
}

func (m machine) String() string {
	parts := []string{fmt.Sprintf("machine: %s/%s, %d CPUs, %s", m.GOOS, m.GOARCH, m.NumCPU, m.GoVersion)}
	if m.PostgresVersion != "" {
		parts = append(parts, fmt.Sprintf("PostgreSQL %s, fsync=%s, synchronous_commit=%s, autovacuum=%s",
			m.PostgresVersion, m.Fsync, m.SynchronousCommit, m.Autovacuum))
	}
	if m.SQLiteVersion != "" {
		parts = append(parts, fmt.Sprintf("SQLite %s (modernc.org/sqlite), %s, files on %s", m.SQLiteVersion, m.SQLiteSettings, m.SQLiteFS))
	}
	return strings.Join(parts, ", ")
}
