package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

const messageCols = `id, task_id, topic, payload, sent_at`

func scanMessage(row scanner) (task.Message, error) {
	var m task.Message
	var payload string
	var at sql.NullInt64
	err := row.Scan(&m.ID, &m.TaskID, &m.Topic, &payload, &at)
	m.Payload, m.SentAt = json.RawMessage(payload), fromMicros(at)
	return m, err
}

// Send keeps a message for a task that has not ended, and makes the task
// due now when it is SENSING awaiting the message's topic.
func (s *Store) Send(ctx context.Context, taskID int64, topic string, payload json.RawMessage) (task.Message, error) {
	if err := store.ValidateMessage(taskID, topic, payload); err != nil {
		return task.Message{}, err
	}
	var m task.Message
	err := s.w.do(ctx, func(x *wtx) error {
		var state task.State
		err := x.queryRow(`SELECT state FROM tasks WHERE id = ?`, taskID).Scan(&state)
		if errors.Is(err, sql.ErrNoRows) {
			return task.ErrNotFound
		}
		if err != nil {
			return err
		}
		if state.Terminal() {
			return store.SendRefusal(state)
		}
		m, err = scanMessage(x.queryRow(`INSERT INTO messages (task_id, topic, payload, sent_at) VALUES (?, ?, ?, ?)
			RETURNING `+messageCols, taskID, topic, string(payload), x.now.UnixMicro()))
		if err != nil {
			return err
		}
		res, err := x.exec(`UPDATE tasks SET next_at = ? WHERE id = ? AND state = 'SENSING' AND awaits = ?`, x.now.UnixMicro(), taskID, topic)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		x.due = x.due || n > 0
		return err
	})
	if err != nil {
		return task.Message{}, fmt.Errorf("send a message on topic %q to task %d: %w", topic, taskID, err)
	}
	return m, nil
}

// Receive takes the oldest message of topic kept for a task RUNNING under
// token and records it as step st, in one transaction.
func (s *Store) Receive(ctx context.Context, taskID, token int64, topic string, st task.Step) (task.Step, bool, error) {
	var got task.Step
	found := false
	err := s.w.do(ctx, func(x *wtx) error {
		found = false
		var held int
		if err := x.queryRow(`SELECT count(*) FROM tasks WHERE id = ? AND state = 'RUNNING' AND lease_token = ?`, taskID, token).Scan(&held); err != nil {
			return err
		}
		if held == 0 {
			return task.ErrLeaseLost
		}
		rec, err := scanStep(x.queryRow(`SELECT `+stepCols+` FROM steps WHERE task_id = ? AND seq = ?`, taskID, st.Seq))
		if err == nil {
			got, found = rec, true
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		m, err := scanMessage(x.queryRow(`SELECT `+messageCols+` FROM messages WHERE task_id = ? AND topic = ? ORDER BY id LIMIT 1`, taskID, topic))
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if st.Result, err = store.ReceivedResult(m); err != nil {
			return err
		}
		if err := store.ValidateStep(st); err != nil {
			return err
		}
		if _, err := x.exec(`DELETE FROM messages WHERE id = ?`, m.ID); err != nil {
			return err
		}
		if _, err := x.exec(`INSERT INTO steps (task_id, seq, name, occurrence, attempt, result, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			taskID, st.Seq, st.Name, st.Occurrence, st.Attempt, string(st.Result), x.now.UnixMicro()); err != nil {
			return err
		}
		got, found = st, true
		got.RecordedAt = fromMicros(sql.NullInt64{Int64: x.now.UnixMicro(), Valid: true})
		return nil
	})
	if err != nil {
		return task.Step{}, false, fmt.Errorf("receive a message on topic %q for task %d: %w", topic, taskID, err)
	}
	return got, found, nil
}

// Messages lists the messages kept for a task, oldest first.
func (s *Store) Messages(ctx context.Context, taskID int64) ([]task.Message, error) {
	rows, err := s.query(ctx, `SELECT `+messageCols+` FROM messages WHERE task_id = ? ORDER BY id`, taskID)
	if err != nil {
		return nil, fmt.Errorf("messages of task %d: %w", taskID, err)
	}
	defer rows.Close()
	var out []task.Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, fmt.Errorf("messages of task %d: %w", taskID, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("messages of task %d: %w", taskID, err)
	}
	return out, nil
}

// wakeAwaiting makes due at once the tasks of items that moved SENSING
// awaiting a topic of which a message is kept already: one sent while
// their attempt ended.
func wakeAwaiting(x *wtx, fs []store.Finish, items []int, moved map[int64]int64) error {
	for _, i := range items {
		f := fs[i]
		if _, ok := moved[f.TaskID]; !ok || f.Awaits == "" {
			continue
		}
		if _, err := x.exec(`UPDATE tasks SET next_at = ?1 WHERE id = ?2 AND state = 'SENSING' AND awaits = ?3
			AND EXISTS (SELECT 1 FROM messages WHERE task_id = ?2 AND topic = ?3)`, x.now.UnixMicro(), f.TaskID, f.Awaits); err != nil {
			return err
		}
	}
	return nil
}
