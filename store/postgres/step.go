package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

const stepCols = `seq, name, occurrence, attempt, result, recorded_at`

func scanStep(row pgx.Row) (task.Step, error) {
	var s task.Step
	var result []byte
	err := row.Scan(&s.Seq, &s.Name, &s.Occurrence, &s.Attempt, &result, &s.RecordedAt)
	s.Result = result
	return s, err
}

// Steps lists a task's recorded steps by seq.
func (s *Store) Steps(ctx context.Context, taskID int64) ([]task.Step, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT `+stepCols+` FROM $S.steps WHERE task_id = $1 ORDER BY seq`), taskID)
	if err != nil {
		return nil, fmt.Errorf("steps of task %d: %w", taskID, err)
	}
	defer rows.Close()
	var out []task.Step
	for rows.Next() {
		st, err := scanStep(rows)
		if err != nil {
			return nil, fmt.Errorf("steps of task %d: %w", taskID, err)
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("steps of task %d: %w", taskID, err)
	}
	return out, nil
}

// recordStepSQL records a step of a task held under a token, or answers
// the step recorded at its seq already; no row when the lease is lost.
const recordStepSQL = `WITH held AS (
	SELECT 1 FROM $S.tasks WHERE id = $1 AND state = 'RUNNING' AND lease_token = $2
), ins AS (
	INSERT INTO $S.steps (task_id, seq, name, occurrence, attempt, result)
	SELECT $1, $3, $4, $5, $6, $7 WHERE EXISTS (SELECT 1 FROM held)
	ON CONFLICT (task_id, seq) DO NOTHING
	RETURNING ` + stepCols + `
)
SELECT ` + stepCols + ` FROM ins
UNION ALL
SELECT ` + stepCols + ` FROM $S.steps
WHERE task_id = $1 AND seq = $3 AND EXISTS (SELECT 1 FROM held) AND NOT EXISTS (SELECT 1 FROM ins)`

// RecordStep records step st of task taskID, held under token.
func (s *Store) RecordStep(ctx context.Context, taskID, token int64, st task.Step) (task.Step, error) {
	if err := store.ValidateStep(st); err != nil {
		return task.Step{}, err
	}
	var got task.Step
	err := retrying(ctx, func(ctx context.Context) error {
		var err error
		got, err = scanStep(s.pool.QueryRow(ctx, s.sql(recordStepSQL), taskID, token, st.Seq, st.Name, st.Occurrence, st.Attempt, string(st.Result)))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return task.Step{}, fmt.Errorf("record step %q of task %d: %w", st.Name, taskID, task.ErrLeaseLost)
	}
	if err != nil {
		return task.Step{}, fmt.Errorf("record step %q of task %d: %w", st.Name, taskID, err)
	}
	return got, nil
}
