package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// RawTaskRows is rawTaskRows, for the tests of the package's users.
var RawTaskRows = rawTaskRows

// SuccessDurationsSQL is successDurationsSQL, for the test of its plan.
const SuccessDurationsSQL = successDurationsSQL

// DeadLetterGroupsSQL and SeriesSQL are the Console's statements, for the
// tests of their plans.
const (
	DeadLetterGroupsSQL = deadLetterGroupsSQL
	SeriesSQL           = seriesSQL
)

// ListTasksSQL is the statement ListTasks runs for f, and its arguments.
var ListTasksSQL = listTasksSQL

// PruneTasksSQL and PruneRules are a prune round's statement and how its
// rules become arguments, for the test of its plan.
var PruneRules = pruneRules

const PruneTasksSQL = pruneTasksSQL

// PruneRuns is pruneRuns, for the test of rounds that each delete some of
// a run's last tasks.
func (s *Store) PruneRuns(ctx context.Context, tx pgx.Tx, runs []int64) (int, error) {
	return s.pruneRuns(ctx, tx, runs)
}

// MigrateThrough makes schema a store of an older version: the numbered
// migrations up to version apply, and the functions are written only if
// asked for (they are this grit's, which an older store did not have).
func MigrateThrough(ctx context.Context, db *pgxpool.Pool, schema string, version int, withFunctions bool) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	var upTo []migration
	for _, m := range ms {
		if m.Version <= version {
			upTo = append(upTo, m)
		}
	}
	var fns []function
	if withFunctions {
		if fns, err = functions(); err != nil {
			return err
		}
	}
	return migrateTo(ctx, db, schema, upTo, fns)
}

// Versions lists the versions of the embedded migrations, oldest first.
func Versions() ([]int, error) {
	ms, err := migrations()
	if err != nil {
		return nil, err
	}
	vs := make([]int, len(ms))
	for i, m := range ms {
		vs[i] = m.Version
	}
	return vs, nil
}

// FunctionsSum is the sum of the embedded functions' texts, as a schema
// records it.
func FunctionsSum() (string, error) {
	fns, err := functions()
	if err != nil {
		return "", err
	}
	return functionsSum(fns), nil
}

// WriteFunctions writes the functions in tx, whatever the schema records,
// as a migration does after a numbered migration: for the tests of what a
// Store sees while another process migrates.
func WriteFunctions(ctx context.Context, tx pgx.Tx, schema string) error {
	fns, err := functions()
	if err != nil {
		return err
	}
	return writeFunctions(ctx, tx, schema, fns, true)
}
