package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
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
