package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

const stepCols = `seq, name, occurrence, attempt, result, recorded_at`

func scanStep(row scanner) (task.Step, error) {
	var s task.Step
	var result string
	var at sql.NullInt64
	err := row.Scan(&s.Seq, &s.Name, &s.Occurrence, &s.Attempt, &result, &at)
	s.Result, s.RecordedAt = []byte(result), fromMicros(at)
	return s, err
}

// Steps lists a task's recorded steps by seq.
func (s *Store) Steps(ctx context.Context, taskID int64) ([]task.Step, error) {
	rows, err := s.query(ctx, `SELECT `+stepCols+` FROM steps WHERE task_id = ? ORDER BY seq`, taskID)
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

// RecordStep records step st of task taskID, held under token, or
// answers the step recorded at its seq already.
func (s *Store) RecordStep(ctx context.Context, taskID, token int64, st task.Step) (task.Step, error) {
	if err := store.ValidateStep(st); err != nil {
		return task.Step{}, err
	}
	var got task.Step
	err := s.w.do(ctx, func(x *wtx) error {
		var held int
		err := x.queryRow(`SELECT count(*) FROM tasks WHERE id = ? AND state = 'RUNNING' AND lease_token = ?`, taskID, token).Scan(&held)
		if err != nil {
			return err
		}
		if held == 0 {
			return task.ErrLeaseLost
		}
		if _, err := x.exec(`INSERT INTO steps (task_id, seq, name, occurrence, attempt, result, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (task_id, seq) DO NOTHING`, taskID, st.Seq, st.Name, st.Occurrence, st.Attempt, string(st.Result), x.now.UnixMicro()); err != nil {
			return err
		}
		got, err = scanStep(x.queryRow(`SELECT `+stepCols+` FROM steps WHERE task_id = ? AND seq = ?`, taskID, st.Seq))
		return err
	})
	if err != nil {
		if errors.Is(err, task.ErrLeaseLost) {
			return task.Step{}, fmt.Errorf("record step %q of task %d: %w", st.Name, taskID, task.ErrLeaseLost)
		}
		return task.Step{}, fmt.Errorf("record step %q of task %d: %w", st.Name, taskID, err)
	}
	return got, nil
}
