package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// RegisterWorker records a worker as active and seen now, replacing what
// was known of a worker with the same id. A zero StartedAt means now.
func (s *Store) RegisterWorker(ctx context.Context, w task.Worker) error {
	if w.ID == "" {
		return fmt.Errorf("register worker: no id: %w", task.ErrInvalid)
	}
	err := retrying(ctx, func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, s.sql(`INSERT INTO $S.workers (id, host, pid, version, started_at, last_seen, active, kinds)
			VALUES ($1, $2, $3, $4, coalesce($5, now()), now(), true, $6)
			ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid,
				version = excluded.version, started_at = excluded.started_at,
				last_seen = excluded.last_seen, active = true, kinds = excluded.kinds`),
			w.ID, w.Host, w.PID, w.Version, tstz(w.StartedAt), store.WorkerKinds(w.Kinds))
		return err
	})
	if err != nil {
		return fmt.Errorf("register worker %s: %w", w.ID, err)
	}
	return nil
}

// DeactivateWorker marks a worker inactive.
func (s *Store) DeactivateWorker(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, s.sql(`UPDATE $S.workers SET active = false WHERE id = $1`), id)
	switch {
	case err != nil:
		return fmt.Errorf("deactivate worker %s: %w", id, err)
	case tag.RowsAffected() == 0:
		return fmt.Errorf("deactivate worker %s: %w", id, task.ErrNotFound)
	}
	return nil
}

// Workers returns every worker known, by id.
func (s *Store) Workers(ctx context.Context) ([]task.Worker, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT `+workerCols+` FROM $S.workers ORDER BY id`))
	if err != nil {
		return nil, fmt.Errorf("workers: %w", err)
	}
	ws, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (task.Worker, error) { return scanWorker(r) })
	if err != nil {
		return nil, fmt.Errorf("workers: %w", err)
	}
	return ws, nil
}

// ReportPoll records the worker's last failed claim, at the database's time.
func (s *Store) ReportPoll(ctx context.Context, worker, lastError string, failures int) error {
	_, err := s.pool.Exec(ctx, s.sql(`UPDATE $S.workers SET last_error = $1, last_error_at = now(), failures = $2 WHERE id = $3`),
		lastError, failures, worker)
	if err != nil {
		return fmt.Errorf("report poll of worker %s: %w", worker, err)
	}
	return nil
}
