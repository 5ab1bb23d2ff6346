package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// runs numbers the runs of this process, so that two runs in one test
// binary never share a schema.
var runs atomic.Int64

// schemas creates a fresh schema for each workload of each system and
// drops it again; dropAll drops whatever an error or an interrupt left.
type schemas struct {
	pool   *pgxpool.Pool
	prefix string

	mu   sync.Mutex
	live map[string]bool
}

func newSchemas(pool *pgxpool.Pool) *schemas {
	return &schemas{
		pool:   pool,
		prefix: fmt.Sprintf("queuecmp_%d_%d", os.Getpid(), runs.Add(1)),
		live:   map[string]bool{},
	}
}

// create makes an empty schema for a system's workload and returns its
// name.
func (s *schemas) create(ctx context.Context, sys, workload string) (string, error) {
	name := s.prefix + "_" + strings.ReplaceAll(sys, "-", "_") + "_" + workload
	if _, err := s.pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("create schema %s: %w", name, err)
	}
	s.mu.Lock()
	s.live[name] = true
	s.mu.Unlock()
	return name, nil
}

func (s *schemas) drop(ctx context.Context, name string) error {
	if _, err := s.pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
		return fmt.Errorf("drop schema %s: %w", name, err)
	}
	s.mu.Lock()
	delete(s.live, name)
	s.mu.Unlock()
	return nil
}

func (s *schemas) dropAll(ctx context.Context) error {
	s.mu.Lock()
	var names []string
	for n := range s.live {
		names = append(names, n)
	}
	s.mu.Unlock()
	var errs []error
	for _, n := range names {
		errs = append(errs, s.drop(ctx, n))
	}
	return errors.Join(errs...)
}
