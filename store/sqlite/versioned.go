package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/grit-run/grit/task"
)

// writeVersioned is the one write of a row kept at a version, with tasks
// enqueued in the same write transaction (a schedule, a machine's
// instance): take takes the row at the version its writer read, or makes
// it; when it found no row, nothing is written and ok is false. Otherwise
// the tasks go in, then says the new state and due time, and put writes
// them.
func (s *Store) writeVersioned(ctx context.Context, take func(*wtx) (sql.Result, error), tasks []task.NewTask,
	then func([]task.Enqueued) (json.RawMessage, time.Time, error),
	put func(x *wtx, state string, due any) error) (bool, error) {
	// ok is the writer's: do may return at ctx's end while the writer
	// still runs fn, so it is neither read nor written here until do
	// returned without an error (a named result would be written by the
	// return itself).
	var ok bool
	err := s.w.do(ctx, func(x *wtx) error {
		ok = false
		res, err := take(x)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		enq := make([]task.Enqueued, len(tasks))
		for i, t := range tasks {
			if enq[i], err = enqueueIn(x, 0, t, nil); err != nil {
				return fmt.Errorf("task %d: %w", i, err)
			}
		}
		state, due, err := then(enq)
		if err != nil {
			return err
		}
		if err := put(x, string(state), micros(due)); err != nil {
			return err
		}
		ok = true
		return nil
	})
	if err != nil {
		return false, err
	}
	return ok, nil
}
