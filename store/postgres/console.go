package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// ListRuns lists runs, newest first, walking the primary key backward
// from f.BeforeID: runs are few beside tasks, and a state narrows a walk
// that stops at the page's size.
func (s *Store) ListRuns(ctx context.Context, f task.RunFilter) ([]task.Run, error) {
	q := `SELECT ` + runCols + ` FROM $S.runs WHERE ($1 = 0 OR id < $1)
		AND ($2::text[] IS NULL OR state = ANY($2::text[])) AND ($3 = '' OR name = $3) ORDER BY id DESC`
	args := []any{f.BeforeID, nilIfEmpty(stateNames(f.States)), f.Name}
	if f.Limit > 0 {
		q += ` LIMIT $4`
		args = append(args, f.Limit)
	}
	rows, err := s.pool.Query(ctx, s.sql(q), args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	rs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (task.Run, error) { return scanRun(r) })
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return rs, nil
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// deadLetterGroupsSQL reads the dead letters through tasks_state_id alone;
// each group's sample is the task dead-lettered last, found by primary
// key, one per group.
const deadLetterGroupsSQL = `WITH g AS (
	SELECT fingerprint, count(*) AS n, min(finished_at) AS first_at, max(finished_at) AS last_at,
		(array_agg(id ORDER BY finished_at DESC, id DESC))[1] AS sample,
		array_agg(DISTINCT kind ORDER BY kind) AS kinds
	FROM $S.tasks WHERE state = 'DEAD_LETTER' GROUP BY fingerprint
)
SELECT fingerprint, n, first_at, last_at, sample, (SELECT last_error FROM $S.tasks t WHERE t.id = g.sample), kinds
FROM g ORDER BY n DESC, last_at DESC, fingerprint`

// DeadLetterGroups groups the DEAD_LETTER tasks by fingerprint, the
// largest group first (then the latest).
func (s *Store) DeadLetterGroups(ctx context.Context) ([]store.DeadLetterGroup, error) {
	rows, err := s.pool.Query(ctx, s.sql(deadLetterGroupsSQL))
	if err != nil {
		return nil, fmt.Errorf("dead letter groups: %w", err)
	}
	gs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.DeadLetterGroup, error) {
		var g store.DeadLetterGroup
		var first, last pgtype.Timestamptz
		var sample pgtype.Text
		err := r.Scan(&g.Fingerprint, &g.Count, &first, &last, &g.SampleTask, &sample, &g.Kinds)
		g.FirstAt, g.LastAt, g.Sample = first.Time, last.Time, sample.String
		return g, err
	})
	if err != nil {
		return nil, fmt.Errorf("dead letter groups: %w", err)
	}
	return gs, nil
}

// seriesSQL counts, by bucket (the whole steps since $1, in microseconds
// $2) and outcome, the attempts that ended at or after $1. Successes come
// from tasks, since a plain success writes no attempts row (its attempt
// stays on the task row): tasks_success is ordered by kind and name
// before its time, so the query skips from one kind and name to the next
// (a loose index scan, two probes each) and reads the window of each.
// The window is read in a lateral subquery that counts: one that did not
// could be joined to the kinds and names by hash, reading every success
// ever recorded. Its cost grows with the kinds and names that ever
// succeeded, and with the successes in the window, not with the tasks.
// Every other ending has its attempts row, found through attempts_ended.
const seriesSQL = `WITH RECURSIVE k AS (
	(SELECT kind, name FROM $S.tasks WHERE state = 'SUCCESS' ORDER BY kind, name LIMIT 1)
	UNION ALL
	SELECT n.kind, n.name FROM k CROSS JOIN LATERAL (
		SELECT t.kind, t.name FROM $S.tasks t WHERE t.state = 'SUCCESS' AND (t.kind, t.name) > (k.kind, k.name)
		ORDER BY t.kind, t.name LIMIT 1) n
)
SELECT s.b, 'SUCCESS', sum(s.n)::bigint
FROM k CROSS JOIN LATERAL (
	SELECT (extract(epoch FROM t.finished_at - $1::timestamptz) * 1000000)::bigint / $2::bigint AS b, count(*) AS n
	FROM $S.tasks t
	WHERE t.state = 'SUCCESS' AND t.kind = k.kind AND t.name = k.name AND t.finished_at >= $1
	GROUP BY 1) s
GROUP BY 1
UNION ALL
SELECT (extract(epoch FROM ended_at - $1::timestamptz) * 1000000)::bigint / $2::bigint, outcome, count(*)
FROM $S.attempts WHERE ended_at >= $1 AND outcome NOT IN ('RUNNING', 'SUCCESS')
GROUP BY 1, 2`

// AttemptSeries counts the attempts that ended at or after since, by
// step-long bucket up to the store's now and by outcome, oldest bucket
// first; a bucket with none is there, empty.
func (s *Store) AttemptSeries(ctx context.Context, since time.Time, step time.Duration) ([]store.AttemptBucket, error) {
	now, err := s.Now(ctx)
	if err != nil {
		return nil, fmt.Errorf("attempt series: %w", err)
	}
	bs, err := store.SeriesBuckets(since, now, step)
	if err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.sql(seriesSQL), since, step.Microseconds())
	if err != nil {
		return nil, fmt.Errorf("attempt series: %w", err)
	}
	var i int64
	var o task.Outcome
	var n int
	_, err = pgx.ForEachRow(rows, []any{&i, &o, &n}, func() error { store.AddToSeries(bs, i, o, n); return nil })
	if err != nil {
		return nil, fmt.Errorf("attempt series: %w", err)
	}
	return bs, nil
}
