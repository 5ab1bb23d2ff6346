package store

import (
	"context"

	"github.com/grit-run/grit/task"
)

// InTx is an optional capability: enqueue and publish in a transaction
// the caller owns, so that the tasks exist if and only if it commits (a
// transactional outbox), and no worker sees them before. tx is of the
// driver's own type (a pgx.Tx for store/postgres), so that package grit
// names no driver's types; another type is refused with an error matching
// task.ErrInvalid that names the type wanted.
type InTx interface {
	EnqueueIn(ctx context.Context, tx any, ts []task.NewTask) ([]task.Enqueued, error)
	PublishIn(ctx context.Context, tx any, evs []task.Event) ([]task.Task, error)
}
