package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

const quarantinedCols = `id, task_id, queue, kind, attempt, replay_kind, item, error, fingerprint, created_at`

func scanQuarantined(row pgx.Row) (task.Quarantined, error) {
	var q task.Quarantined
	var item string
	err := row.Scan(&q.ID, &q.TaskID, &q.Queue, &q.Kind, &q.Attempt, &q.ReplayKind, &item, &q.Error, &q.Fingerprint, &q.CreatedAt)
	q.Item = []byte(item)
	return q, err
}

// quarantineSQL records items of a task held under a token ($1, $2), the
// items as arrays of equal length, and answers whether the task was held
// and how many items it has set aside in all. The count reads the table
// as the statement began, so the rows it inserts are added.
const quarantineSQL = `WITH held AS (
	SELECT queue, kind, attempt FROM $S.tasks WHERE id = $1 AND state = 'RUNNING' AND lease_token = $2
), ins AS (
	INSERT INTO $S.quarantined (task_id, queue, kind, attempt, replay_kind, item, digest, error, fingerprint)
	SELECT $1, h.queue, h.kind, h.attempt, i.replay_kind, i.item, i.digest, i.error, i.fingerprint
	FROM held h, unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) AS i (replay_kind, item, digest, error, fingerprint)
	ON CONFLICT (task_id, digest) DO NOTHING
	RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM held), (SELECT count(*) FROM $S.quarantined WHERE task_id = $1) + (SELECT count(*) FROM ins)`

// Quarantine records items set aside by the attempt of task taskID held
// under token, and answers how many the task has set aside in all.
func (s *Store) Quarantine(ctx context.Context, taskID, token int64, items []task.Quarantined) (int, error) {
	digests, err := store.CheckQuarantined(items)
	if err != nil {
		return 0, err
	}
	kinds, its, errs, fps := make([]string, len(items)), make([]string, len(items)), make([]string, len(items)), make([]string, len(items))
	for i, it := range items {
		kinds[i], its[i], errs[i], fps[i] = it.ReplayKind, string(it.Item), it.Error, it.Fingerprint
	}
	var held bool
	var total int
	err = retrying(ctx, func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, s.sql(quarantineSQL), taskID, token, kinds, its, digests, errs, fps).Scan(&held, &total)
	})
	if err == nil && !held {
		err = task.ErrLeaseLost
	}
	if err != nil {
		return 0, fmt.Errorf("quarantine %d items of task %d: %w", len(items), taskID, err)
	}
	return total, nil
}

// ListQuarantined lists the quarantined items f selects, oldest first.
func (s *Store) ListQuarantined(ctx context.Context, f task.QuarantineFilter) ([]task.Quarantined, error) {
	var where []string
	var args []any
	arg := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if f.IDs != nil {
		arg(`id = ANY ($%d)`, f.IDs)
	}
	if f.TaskID != 0 {
		arg(`task_id = $%d`, f.TaskID)
	}
	if f.Fingerprint != "" {
		arg(`fingerprint = $%d`, f.Fingerprint)
	}
	if f.AfterID != 0 {
		arg(`id > $%d`, f.AfterID)
	}
	q := `SELECT ` + quarantinedCols + ` FROM $S.quarantined`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	q += ` ORDER BY id`
	if f.Limit > 0 {
		args = append(args, f.Limit)
		q += fmt.Sprintf(` LIMIT $%d`, len(args))
	}
	rows, err := s.pool.Query(ctx, s.sql(q), args...)
	if err != nil {
		return nil, fmt.Errorf("quarantined items: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (task.Quarantined, error) { return scanQuarantined(r) })
	if err != nil {
		return nil, fmt.Errorf("quarantined items: %w", err)
	}
	return out, nil
}

const quarantineGroupsSQL = `WITH g AS (
	SELECT fingerprint, count(*) AS n, min(created_at) AS first_at, max(created_at) AS last_at,
		max(id) AS sample, array_agg(DISTINCT kind ORDER BY kind) AS kinds
	FROM $S.quarantined GROUP BY fingerprint
)
SELECT fingerprint, n, first_at, last_at, sample, (SELECT error FROM $S.quarantined q WHERE q.id = g.sample), kinds
FROM g ORDER BY n DESC, last_at DESC, fingerprint`

// QuarantineGroups groups the quarantined items by fingerprint, the
// largest group first (then the latest).
func (s *Store) QuarantineGroups(ctx context.Context) ([]store.QuarantineGroup, error) {
	rows, err := s.pool.Query(ctx, s.sql(quarantineGroupsSQL))
	if err != nil {
		return nil, fmt.Errorf("quarantine groups: %w", err)
	}
	gs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.QuarantineGroup, error) {
		var g store.QuarantineGroup
		var sample pgtype.Text
		err := r.Scan(&g.Fingerprint, &g.Count, &g.FirstAt, &g.LastAt, &g.SampleItem, &sample, &g.Kinds)
		g.Sample = sample.String
		return g, err
	})
	if err != nil {
		return nil, fmt.Errorf("quarantine groups: %w", err)
	}
	return gs, nil
}

// DropQuarantined deletes the quarantined items ids names.
func (s *Store) DropQuarantined(ctx context.Context, ids []int64) (int, error) {
	var n int64
	err := retrying(ctx, func(ctx context.Context) error {
		tag, err := s.pool.Exec(ctx, s.sql(`DELETE FROM $S.quarantined WHERE id = ANY ($1)`), ids)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("drop %d quarantined items: %w", len(ids), err)
	}
	return int(n), nil
}
