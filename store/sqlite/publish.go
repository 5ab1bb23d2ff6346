package sqlite

import (
	"context"
	"fmt"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Subscribe adds a subscription; adding one that exists sets its group.
func (s *Store) Subscribe(ctx context.Context, sub task.Subscription) error {
	sub, err := store.CheckSubscription(sub)
	if err != nil {
		return err
	}
	return s.w.do(ctx, func(x *wtx) error {
		_, err := x.exec(`INSERT INTO subscriptions (topic, kind, queue, group_name) VALUES (?, ?, ?, ?)
			ON CONFLICT (topic, kind, queue) DO UPDATE SET group_name = excluded.group_name`, sub.Topic, sub.Kind, sub.Queue, sub.Group)
		return err
	})
}

// Unsubscribe removes a subscription, if it exists.
func (s *Store) Unsubscribe(ctx context.Context, sub task.Subscription) error {
	sub, err := store.CheckSubscription(sub)
	if err != nil {
		return err
	}
	return s.w.do(ctx, func(x *wtx) error {
		_, err := x.exec(`DELETE FROM subscriptions WHERE topic = ? AND kind = ? AND queue = ?`, sub.Topic, sub.Kind, sub.Queue)
		return err
	})
}

// Subscriptions lists a topic's subscriptions ("": every topic's).
func (s *Store) Subscriptions(ctx context.Context, topic string) ([]task.Subscription, error) {
	rows, err := s.query(ctx, `SELECT topic, kind, queue, group_name FROM subscriptions WHERE ? = '' OR topic = ? ORDER BY topic, kind, queue`, topic, topic)
	if err != nil {
		return nil, fmt.Errorf("subscriptions: %w", err)
	}
	defer rows.Close()
	var out []task.Subscription
	for rows.Next() {
		var sub task.Subscription
		if err := rows.Scan(&sub.Topic, &sub.Kind, &sub.Queue, &sub.Group); err != nil {
			return nil, fmt.Errorf("subscriptions: %w", err)
		}
		out = append(out, sub)
	}
	return out, rows.Err()
}

// Publish inserts, in one transaction, a delivery for each subscriber of
// each event.
func (s *Store) Publish(ctx context.Context, evs []task.Event) ([]task.Task, error) {
	for _, e := range evs {
		if err := store.ValidateEvent(e); err != nil {
			return nil, fmt.Errorf("publish: %w", err)
		}
	}
	var out []task.Task
	err := s.w.do(ctx, func(x *wtx) error {
		var err error
		out, err = publish(x, 0, evs)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	return out, nil
}

// publish inserts the deliveries of evs in x, in a run (0: none). A run
// that has ended takes no more: its events deliver nothing.
func publish(x *wtx, runID int64, evs []task.Event) ([]task.Task, error) {
	if runID != 0 {
		var state task.State
		if err := x.queryRow(`SELECT state FROM runs WHERE id = ?`, runID).Scan(&state); err != nil {
			return nil, err
		}
		if state.Terminal() {
			return nil, nil
		}
	}
	var out []task.Task
	for _, e := range evs {
		subs, err := subscribers(x, e.Topic)
		if err != nil {
			return nil, err
		}
		for _, t := range store.Deliveries(e, subs) {
			got, err := enqueueIn(x, runID, t, nil)
			if err != nil {
				return nil, err
			}
			out = append(out, got.Task)
		}
	}
	return out, nil
}

func subscribers(x *wtx, topic string) ([]task.Subscription, error) {
	rows, err := x.query(`SELECT topic, kind, queue, group_name FROM subscriptions WHERE topic = ? ORDER BY kind, queue`, topic)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []task.Subscription
	for rows.Next() {
		var sub task.Subscription
		if err := rows.Scan(&sub.Topic, &sub.Kind, &sub.Queue, &sub.Group); err != nil {
			return nil, err
		}
		out = append(out, sub)
	}
	return out, rows.Err()
}
