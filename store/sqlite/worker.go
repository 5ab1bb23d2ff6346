package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// RegisterWorker records a worker as active and seen now, replacing what
// was known of a worker with the same id. A zero StartedAt means now.
func (s *Store) RegisterWorker(ctx context.Context, w task.Worker) error {
	if w.ID == "" {
		return fmt.Errorf("register worker: no id: %w", task.ErrInvalid)
	}
	err := s.w.do(ctx, func(x *wtx) error {
		started := micros(w.StartedAt)
		if started == nil {
			started = x.now.UnixMicro()
		}
		kinds, err := json.Marshal(store.WorkerKinds(w.Kinds))
		if err != nil {
			return err
		}
		_, err = x.exec(`INSERT INTO workers (id, host, pid, version, started_at, last_seen, active, kinds)
			VALUES (?, ?, ?, ?, ?, ?, 1, ?)
			ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid,
				version = excluded.version, started_at = excluded.started_at,
				last_seen = excluded.last_seen, active = 1, kinds = excluded.kinds`,
			w.ID, w.Host, w.PID, w.Version, started, x.now.UnixMicro(), string(kinds))
		return err
	})
	if err != nil {
		return fmt.Errorf("register worker %s: %w", w.ID, err)
	}
	return nil
}

// DeactivateWorker marks a worker inactive.
func (s *Store) DeactivateWorker(ctx context.Context, id string) error {
	err := s.w.do(ctx, func(x *wtx) error {
		res, err := x.exec(`UPDATE workers SET active = 0 WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return cmpErr(err, task.ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("deactivate worker %s: %w", id, err)
	}
	return nil
}

// cmpErr returns err, or fallback when err is nil.
func cmpErr(err, fallback error) error {
	if err != nil {
		return err
	}
	return fallback
}

// Workers returns every worker known, by id.
func (s *Store) Workers(ctx context.Context) ([]task.Worker, error) {
	rows, err := s.query(ctx, `SELECT `+workerCols+` FROM workers ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("workers: %w", err)
	}
	defer rows.Close()
	var ws []task.Worker
	for rows.Next() {
		w, err := scanWorker(rows)
		if err != nil {
			return nil, fmt.Errorf("workers: %w", err)
		}
		ws = append(ws, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("workers: %w", err)
	}
	return ws, nil
}

// ReportPoll records the worker's last failed claim.
func (s *Store) ReportPoll(ctx context.Context, worker, lastError string, failures int) error {
	err := s.w.do(ctx, func(x *wtx) error {
		_, err := x.exec(`UPDATE workers SET last_error = ?, last_error_at = ?, failures = ? WHERE id = ?`,
			lastError, x.now.UnixMicro(), failures, worker)
		return err
	})
	if err != nil {
		return fmt.Errorf("report poll of worker %s: %w", worker, err)
	}
	return nil
}
