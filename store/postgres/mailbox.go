package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

const messageCols = `id, task_id, topic, payload, sent_at`

func scanMessage(row pgx.Row) (task.Message, error) {
	var m task.Message
	var payload []byte
	err := row.Scan(&m.ID, &m.TaskID, &m.Topic, &payload, &m.SentAt)
	m.Payload = payload
	return m, err
}

// Send keeps a message for a task that has not ended, and makes the task
// due now when it is SENSING awaiting the message's topic. It locks the
// task's row first: a Finish that moves the task to await the topic
// either commits before (and Send sees it awaiting) or waits for Send's
// commit (and its wakeAwaiting, a statement after its move, sees the
// message), so a message is never left waiting for the deadline.
func (s *Store) Send(ctx context.Context, taskID int64, topic string, payload json.RawMessage) (task.Message, error) {
	if err := store.ValidateMessage(taskID, topic, payload); err != nil {
		return task.Message{}, err
	}
	var m task.Message
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var state task.State
		err := tx.QueryRow(ctx, s.sql(`SELECT state FROM $S.tasks WHERE id = $1 FOR UPDATE`), taskID).Scan(&state)
		if errors.Is(err, pgx.ErrNoRows) {
			return task.ErrNotFound
		}
		if err != nil {
			return err
		}
		if state.Terminal() {
			return store.SendRefusal(state)
		}
		m, err = scanMessage(tx.QueryRow(ctx, s.sql(`INSERT INTO $S.messages (task_id, topic, payload) VALUES ($1, $2, $3)
			RETURNING `+messageCols), taskID, topic, string(payload)))
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, s.sql(`UPDATE $S.tasks SET next_at = now() WHERE id = $1 AND state = 'SENSING' AND awaits = $2`), taskID, topic)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		return s.notify(ctx, tx)
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
	err := s.tx(ctx, func(tx pgx.Tx) error {
		found = false
		var held bool
		err := tx.QueryRow(ctx, s.sql(`SELECT EXISTS (SELECT 1 FROM $S.tasks WHERE id = $1 AND state = 'RUNNING' AND lease_token = $2)`), taskID, token).Scan(&held)
		if err != nil {
			return err
		}
		if !held {
			return task.ErrLeaseLost
		}
		rec, err := scanStep(tx.QueryRow(ctx, s.sql(`SELECT `+stepCols+` FROM $S.steps WHERE task_id = $1 AND seq = $2`), taskID, st.Seq))
		if err == nil {
			got, found = rec, true
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		m, err := scanMessage(tx.QueryRow(ctx, s.sql(`DELETE FROM $S.messages WHERE id = (
			SELECT id FROM $S.messages WHERE task_id = $1 AND topic = $2 ORDER BY id LIMIT 1 FOR UPDATE)
			RETURNING `+messageCols), taskID, topic))
		if errors.Is(err, pgx.ErrNoRows) {
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
		got, err = scanStep(tx.QueryRow(ctx, s.sql(`INSERT INTO $S.steps (task_id, seq, name, occurrence, attempt, result)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+stepCols), taskID, st.Seq, st.Name, st.Occurrence, st.Attempt, string(st.Result)))
		found = err == nil
		return err
	})
	if err != nil {
		return task.Step{}, false, fmt.Errorf("receive a message on topic %q for task %d: %w", topic, taskID, err)
	}
	return got, found, nil
}

// Messages lists the messages kept for a task, oldest first.
func (s *Store) Messages(ctx context.Context, taskID int64) ([]task.Message, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT `+messageCols+` FROM $S.messages WHERE task_id = $1 ORDER BY id`), taskID)
	if err != nil {
		return nil, fmt.Errorf("messages of task %d: %w", taskID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (task.Message, error) { return scanMessage(r) })
	if err != nil {
		return nil, fmt.Errorf("messages of task %d: %w", taskID, err)
	}
	return out, nil
}

// wakeAwaiting makes due at once the tasks of round that moved SENSING
// awaiting a topic of which a message is kept already: one sent while
// their attempt ended. It is a statement of its own, after the move, so
// that it sees the messages of every Send that committed before the move
// took the task's row (Send locks it).
func (s *Store) wakeAwaiting(ctx context.Context, tx pgx.Tx, fs []store.Finish, round []int, moved map[int64]int64) error {
	var ids []int64
	var topics []string
	for _, i := range round {
		if _, ok := moved[fs[i].TaskID]; ok && fs[i].Awaits != "" {
			ids, topics = append(ids, fs[i].TaskID), append(topics, fs[i].Awaits)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, s.sql(`UPDATE $S.tasks t SET next_at = now()
		FROM unnest($1::bigint[], $2::text[]) AS w (id, topic)
		WHERE t.id = w.id AND t.state = 'SENSING' AND t.awaits = w.topic
			AND EXISTS (SELECT 1 FROM $S.messages m WHERE m.task_id = w.id AND m.topic = w.topic)`), ids, topics)
	return err
}
