package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/task"
)

// EnqueueIn is EnqueueTx with tx as any (store.InTx): grit.Client's
// EnqueueTx comes here, so that package grit names no pgx type.
func (s *Store) EnqueueIn(ctx context.Context, tx any, ts []task.NewTask) ([]task.Enqueued, error) {
	ptx, err := pgxTx(tx)
	if err != nil {
		return nil, err
	}
	return s.EnqueueTx(ctx, ptx, ts)
}

// PublishIn is PublishTx with tx as any (store.InTx).
func (s *Store) PublishIn(ctx context.Context, tx any, evs []task.Event) ([]task.Task, error) {
	ptx, err := pgxTx(tx)
	if err != nil {
		return nil, err
	}
	return s.PublishTx(ctx, ptx, evs)
}

// pgxTx is tx as the pgx.Tx it must be.
func pgxTx(tx any) (pgx.Tx, error) {
	ptx, ok := tx.(pgx.Tx)
	if !ok || ptx == nil {
		return nil, fmt.Errorf("postgres: a transaction of type %T: want a pgx.Tx (from pgx.BeginFunc or a pool's Begin, on this store's database): %w", tx, task.ErrInvalid)
	}
	return ptx, nil
}
