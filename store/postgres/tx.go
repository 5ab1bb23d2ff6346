package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/grit-run/grit/retry"
)

// conflictPolicy retries a store call that lost a conflict with another
// transaction: a few times, at once or nearly, with full jitter so that the
// two sides do not meet again.
var conflictPolicy = retry.Policy{
	MaxAttempts:  5,
	Backoff:      retry.Exponential{Min: 2 * time.Millisecond, Max: 50 * time.Millisecond},
	ExplicitOnly: true, // every other error is returned at once
	PoisonAfter:  -1,
}

// retryable reports whether err is a conflict that a new try of the same
// transaction resolves (a serialization failure, a deadlock), or a failure
// that happened before anything reached the server.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01"
	}
	return pgconn.SafeToRetry(err)
}

// retrying runs op, and again after a conflict, up to conflictPolicy's
// attempts. Any other error is returned as op gave it.
func retrying(ctx context.Context, op func(ctx context.Context) error) error {
	_, err := retry.Do(ctx, func(ctx context.Context) (struct{}, error) {
		err := op(ctx)
		if err != nil && retryable(err) {
			err = retry.Transient(err)
		}
		return struct{}{}, err
	}, retry.WithPolicy(conflictPolicy))
	var re *retry.Error
	if errors.As(err, &re) && re.Reason == retry.ReasonPermanent {
		return re.Err // not a conflict: as op returned it
	}
	return err
}

// tx runs fn in a READ COMMITTED transaction, retried whole after a
// conflict. fn must not keep state across tries beyond what it returns.
func (s *Store) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	return retrying(ctx, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, fn)
	})
}

// querier is what statements run on: the pool, a transaction (the store's
// or, for EnqueueTx, the caller's).
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// notify tells the Wake listeners of every Store on the schema that work
// may be due. In a transaction it is sent on commit, and not at all on
// rollback; PostgreSQL folds the notifications of one transaction into one.
func (s *Store) notify(ctx context.Context, q querier) error {
	_, err := q.Exec(ctx, `SELECT pg_notify($1, '')`, s.channel)
	return err
}
