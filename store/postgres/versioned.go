package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/grit-run/grit/task"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// writeVersioned is the one write of a row kept at a version, with tasks
// enqueued in the same transaction (a schedule, a machine's instance): take
// locks the row at the version its writer read, or makes it; when it found
// no row, nothing is written and ok is false. Otherwise the tasks go in,
// then says the new state and due time, and put writes them. The row is
// locked first, so two writers at one version do not both enqueue.
func (s *Store) writeVersioned(ctx context.Context, take func(pgx.Tx) (pgconn.CommandTag, error), tasks []task.NewTask,
	then func([]task.Enqueued) (json.RawMessage, time.Time, error),
	put func(tx pgx.Tx, state string, due pgtype.Timestamptz) error) (ok bool, err error) {
	err = s.tx(ctx, func(tx pgx.Tx) error {
		ok = false
		tag, err := take(tx)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		var enq []task.Enqueued
		if len(tasks) > 0 {
			if enq, err = s.enqueue(ctx, tx, tasks); err != nil {
				return err
			}
		}
		state, due, err := then(enq)
		if err != nil {
			return err
		}
		var dueAt pgtype.Timestamptz
		if !due.IsZero() {
			dueAt = pgtype.Timestamptz{Time: due, Valid: true}
		}
		if err := put(tx, string(state), dueAt); err != nil {
			return err
		}
		ok = true
		return nil
	})
	return ok, err
}
