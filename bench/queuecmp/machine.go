package main

import (
	"context"
	"fmt"
	"runtime"

	"github.com/jackc/pgx/v5/pgxpool"
)

// machine is what the numbers were taken on.
type machine struct {
	GOOS              string `json:"goos"`
	GOARCH            string `json:"goarch"`
	NumCPU            int    `json:"num_cpu"`
	GoVersion         string `json:"go_version"`
	PostgresVersion   string `json:"postgres_version"`
	Fsync             string `json:"fsync"`
	SynchronousCommit string `json:"synchronous_commit"`
	// Autovacuum matters to every queue: without it, the index entries
	// of claimed and finished jobs stay until a VACUUM.
	Autovacuum string `json:"autovacuum"`
}

func readMachine(ctx context.Context, pool *pgxpool.Pool) (machine, error) {
	m := machine{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, NumCPU: runtime.NumCPU(), GoVersion: runtime.Version()}
	for _, s := range []struct {
		name string
		dst  *string
	}{{"server_version", &m.PostgresVersion}, {"fsync", &m.Fsync}, {"synchronous_commit", &m.SynchronousCommit}, {"autovacuum", &m.Autovacuum}} {
		if err := pool.QueryRow(ctx, "SHOW "+s.name).Scan(s.dst); err != nil {
			return m, fmt.Errorf("show %s: %w", s.name, err)
		}
	}
	return m, nil
}

func (m machine) String() string {
	return fmt.Sprintf("machine: %s/%s, %d CPUs, %s, PostgreSQL %s, fsync=%s, synchronous_commit=%s, autovacuum=%s",
		m.GOOS, m.GOARCH, m.NumCPU, m.GoVersion, m.PostgresVersion, m.Fsync, m.SynchronousCommit, m.Autovacuum)
}
