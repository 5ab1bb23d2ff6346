package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// ListRuns lists runs, newest first, walking the primary key backward
// from f.BeforeID: runs are few beside tasks, and a state narrows a walk
// that stops at the page's size.
func (s *Store) ListRuns(ctx context.Context, f task.RunFilter) ([]task.Run, error) {
	var where []string
	var args []any
	if f.BeforeID != 0 {
		where, args = append(where, "id < ?"), append(args, f.BeforeID)
	}
	if len(f.States) > 0 {
		where, args = append(where, "state IN (SELECT value FROM json_each(?))"), append(args, jsonList(f.States))
	}
	if f.Name != "" {
		where, args = append(where, "name = ?"), append(args, f.Name)
	}
	q := `SELECT ` + runCols + ` FROM runs`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY id DESC`
	if f.Limit > 0 {
		q, args = q+` LIMIT ?`, append(args, f.Limit)
	}
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var rs []task.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		rs = append(rs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return rs, nil
}

// deadLetterGroupsSQL reads the dead letters through tasks_state_id
// alone; each group's sample is the task dead-lettered last.
const deadLetterGroupsSQL = `SELECT fingerprint, count(*), min(finished_at), max(finished_at),
	max(CASE WHEN rn = 1 THEN id END), max(CASE WHEN rn = 1 THEN last_error END), json_group_array(DISTINCT kind)
FROM (SELECT fingerprint, finished_at, id, last_error, kind,
		row_number() OVER (PARTITION BY fingerprint ORDER BY finished_at DESC, id DESC) AS rn
	FROM tasks INDEXED BY tasks_state_id WHERE state = 'DEAD_LETTER' AND ` + offPathStates + `)
GROUP BY fingerprint ORDER BY 2 DESC, 4 DESC, 1`

// DeadLetterGroups groups the DEAD_LETTER tasks by fingerprint, the
// largest group first (then the latest).
func (s *Store) DeadLetterGroups(ctx context.Context) ([]store.DeadLetterGroup, error) {
	rows, err := s.query(ctx, deadLetterGroupsSQL)
	if err != nil {
		return nil, fmt.Errorf("dead letter groups: %w", err)
	}
	defer rows.Close()
	var gs []store.DeadLetterGroup
	for rows.Next() {
		var g store.DeadLetterGroup
		var first, last sql.NullInt64
		var kinds string
		if err := rows.Scan(&g.Fingerprint, &g.Count, &first, &last, &g.SampleTask, &g.Sample, &kinds); err != nil {
			return nil, fmt.Errorf("dead letter groups: %w", err)
		}
		if err := json.Unmarshal([]byte(kinds), &g.Kinds); err != nil {
			return nil, fmt.Errorf("dead letter groups: kinds of %q: %w", g.Fingerprint, err)
		}
		slices.Sort(g.Kinds)
		g.FirstAt, g.LastAt = fromMicros(first), fromMicros(last)
		gs = append(gs, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("dead letter groups: %w", err)
	}
	return gs, nil
}

// successNamesSQL is the start of a statement that reads the kinds and
// names of SUCCESS tasks through tasks_success, in k (kind, name), where a
// NULL name ends each kind: the loose index scan seriesSQL describes.
const successNamesSQL = `WITH RECURSIVE kinds (kind) AS (
	SELECT (SELECT kind FROM tasks INDEXED BY tasks_success WHERE state = 'SUCCESS' ORDER BY kind LIMIT 1)
	UNION ALL
	SELECT (SELECT t.kind FROM tasks t INDEXED BY tasks_success
			WHERE t.state = 'SUCCESS' AND t.kind > kinds.kind ORDER BY t.kind LIMIT 1)
	FROM kinds WHERE kinds.kind IS NOT NULL
), k (kind, name) AS (
	SELECT kind, (SELECT t.name FROM tasks t INDEXED BY tasks_success
			WHERE t.state = 'SUCCESS' AND t.kind = kinds.kind ORDER BY t.name LIMIT 1)
	FROM kinds WHERE kinds.kind IS NOT NULL
	UNION ALL
	SELECT k.kind, (SELECT t.name FROM tasks t INDEXED BY tasks_success
			WHERE t.state = 'SUCCESS' AND t.kind = k.kind AND t.name > k.name ORDER BY t.name LIMIT 1)
	FROM k WHERE k.name IS NOT NULL
)`

// seriesSQL counts, by bucket (the whole steps ?2 since ?1, both in
// microseconds) and outcome, the attempts that ended at or after ?1.
// Successes come from tasks_success, since a plain success writes no
// attempts row (its attempt stays on the task row): the index is ordered
// by kind and name before its time, so the query skips from one kind to
// the next, and within a kind from one name to the next (a loose index
// scan, one probe each), and reads the window of each. The probes compare one column at
// a time: SQLite walks a comparison of rows, (kind, name) > (?, ?), from
// the kind alone, reading every name of the kind before the next one.
// The cost grows with the kinds and names that ever succeeded, and with
// the successes in the window, not with the tasks. Every other ending is
// read through attempts_ended.
const seriesSQL = successNamesSQL + `
SELECT (t.finished_at - ?1) / ?2, 'SUCCESS', count(*)
FROM k CROSS JOIN tasks t INDEXED BY tasks_success
WHERE k.name IS NOT NULL AND t.state = 'SUCCESS' AND t.kind = k.kind AND t.name = k.name AND t.finished_at >= ?1
GROUP BY 1
UNION ALL
SELECT (ended_at - ?1) / ?2, outcome, count(*)
FROM attempts INDEXED BY attempts_ended
WHERE ended_at >= ?1 AND outcome NOT IN ('RUNNING', 'SUCCESS')
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
	rows, err := s.query(ctx, seriesSQL, since.UnixMicro(), step.Microseconds())
	if err != nil {
		return nil, fmt.Errorf("attempt series: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var i int64
		var o task.Outcome
		var n int
		if err := rows.Scan(&i, &o, &n); err != nil {
			return nil, fmt.Errorf("attempt series: %w", err)
		}
		store.AddToSeries(bs, i, o, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("attempt series: %w", err)
	}
	return bs, nil
}
