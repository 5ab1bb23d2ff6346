package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

const quarantinedCols = `id, task_id, queue, kind, attempt, replay_kind, item, error, fingerprint, created_at`

func scanQuarantined(row scanner) (task.Quarantined, error) {
	var q task.Quarantined
	var item string
	var at sql.NullInt64
	err := row.Scan(&q.ID, &q.TaskID, &q.Queue, &q.Kind, &q.Attempt, &q.ReplayKind, &item, &q.Error, &q.Fingerprint, &at)
	q.Item, q.CreatedAt = json.RawMessage(item), fromMicros(at)
	return q, err
}

// Quarantine records items set aside by the attempt of task taskID held
// under token, and answers how many the task has set aside in all.
func (s *Store) Quarantine(ctx context.Context, taskID, token int64, items []task.Quarantined) (int, error) {
	digests, err := store.CheckQuarantined(items)
	if err != nil {
		return 0, err
	}
	var total int
	err = s.w.do(ctx, func(x *wtx) error {
		var queue, kind string
		var attempt int
		err := x.queryRow(`SELECT queue, kind, attempt FROM tasks WHERE id = ? AND state = 'RUNNING' AND lease_token = ?`, taskID, token).Scan(&queue, &kind, &attempt)
		if errors.Is(err, sql.ErrNoRows) {
			return task.ErrLeaseLost
		}
		if err != nil {
			return err
		}
		for i, it := range items {
			if _, err := x.exec(`INSERT INTO quarantined (task_id, queue, kind, attempt, replay_kind, item, digest, error, fingerprint, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (task_id, digest) DO NOTHING`,
				taskID, queue, kind, attempt, it.ReplayKind, string(it.Item), digests[i], it.Error, it.Fingerprint, x.now.UnixMicro()); err != nil {
				return err
			}
		}
		return x.queryRow(`SELECT count(*) FROM quarantined WHERE task_id = ?`, taskID).Scan(&total)
	})
	if err != nil {
		return 0, fmt.Errorf("quarantine %d items of task %d: %w", len(items), taskID, err)
	}
	return total, nil
}

// ListQuarantined lists the quarantined items f selects, oldest first.
func (s *Store) ListQuarantined(ctx context.Context, f task.QuarantineFilter) ([]task.Quarantined, error) {
	var where []string
	var args []any
	if f.IDs != nil {
		ids, _ := json.Marshal(f.IDs)
		where, args = append(where, `id IN (SELECT value FROM json_each(?))`), append(args, string(ids))
	}
	if f.TaskID != 0 {
		where, args = append(where, `task_id = ?`), append(args, f.TaskID)
	}
	if f.Fingerprint != "" {
		where, args = append(where, `fingerprint = ?`), append(args, f.Fingerprint)
	}
	if f.AfterID != 0 {
		where, args = append(where, `id > ?`), append(args, f.AfterID)
	}
	q := `SELECT ` + quarantinedCols + ` FROM quarantined`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	q += ` ORDER BY id`
	if f.Limit > 0 {
		q, args = q+` LIMIT ?`, append(args, f.Limit)
	}
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("quarantined items: %w", err)
	}
	defer rows.Close()
	var out []task.Quarantined
	for rows.Next() {
		it, err := scanQuarantined(rows)
		if err != nil {
			return nil, fmt.Errorf("quarantined items: %w", err)
		}
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("quarantined items: %w", err)
	}
	return out, nil
}

const quarantineGroupsSQL = `SELECT fingerprint, n, first_at, last_at, sample, (SELECT error FROM quarantined q WHERE q.id = g.sample), kinds
FROM (SELECT fingerprint, count(*) AS n, min(created_at) AS first_at, max(created_at) AS last_at, max(id) AS sample,
		json_group_array(DISTINCT kind) AS kinds
	FROM quarantined GROUP BY fingerprint) g
ORDER BY n DESC, last_at DESC, fingerprint`

// QuarantineGroups groups the quarantined items by fingerprint, the
// largest group first (then the latest).
func (s *Store) QuarantineGroups(ctx context.Context) ([]store.QuarantineGroup, error) {
	rows, err := s.query(ctx, quarantineGroupsSQL)
	if err != nil {
		return nil, fmt.Errorf("quarantine groups: %w", err)
	}
	defer rows.Close()
	var gs []store.QuarantineGroup
	for rows.Next() {
		var g store.QuarantineGroup
		var first, last sql.NullInt64
		var kinds string
		if err := rows.Scan(&g.Fingerprint, &g.Count, &first, &last, &g.SampleItem, &g.Sample, &kinds); err != nil {
			return nil, fmt.Errorf("quarantine groups: %w", err)
		}
		if err := json.Unmarshal([]byte(kinds), &g.Kinds); err != nil {
			return nil, fmt.Errorf("quarantine groups: kinds of %q: %w", g.Fingerprint, err)
		}
		slices.Sort(g.Kinds)
		g.FirstAt, g.LastAt = fromMicros(first), fromMicros(last)
		gs = append(gs, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("quarantine groups: %w", err)
	}
	return gs, nil
}

// DropQuarantined deletes the quarantined items ids names.
func (s *Store) DropQuarantined(ctx context.Context, ids []int64) (int, error) {
	list, _ := json.Marshal(ids)
	var n int64
	err := s.w.do(ctx, func(x *wtx) error {
		res, err := x.exec(`DELETE FROM quarantined WHERE id IN (SELECT value FROM json_each(?))`, string(list))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("drop %d quarantined items: %w", len(ids), err)
	}
	return int(n), nil
}
