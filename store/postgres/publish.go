package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Subscribe adds a subscription; adding one that exists sets its group.
func (s *Store) Subscribe(ctx context.Context, sub task.Subscription) error {
	sub, err := store.CheckSubscription(sub)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, s.sql(`INSERT INTO $S.subscriptions (topic, kind, queue, group_name) VALUES ($1, $2, $3, $4)
		ON CONFLICT (topic, kind, queue) DO UPDATE SET group_name = excluded.group_name`),
		sub.Topic, sub.Kind, sub.Queue, sub.Group)
	if err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}
	return nil
}

// Unsubscribe removes a subscription, if it exists.
func (s *Store) Unsubscribe(ctx context.Context, sub task.Subscription) error {
	sub, err := store.CheckSubscription(sub)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, s.sql(`DELETE FROM $S.subscriptions WHERE topic = $1 AND kind = $2 AND queue = $3`),
		sub.Topic, sub.Kind, sub.Queue)
	if err != nil {
		return fmt.Errorf("unsubscribe: %w", err)
	}
	return nil
}

// Subscriptions lists a topic's subscriptions ("": every topic's).
func (s *Store) Subscriptions(ctx context.Context, topic string) ([]task.Subscription, error) {
	subs, err := subscribers(ctx, s, s.pool, topic)
	if err != nil {
		return nil, fmt.Errorf("subscriptions: %w", err)
	}
	return subs, nil
}

func subscribers(ctx context.Context, s *Store, q querier, topic string) ([]task.Subscription, error) {
	rows, err := q.Query(ctx, s.sql(`SELECT topic, kind, queue, group_name FROM $S.subscriptions
		WHERE $1 = '' OR topic = $1 ORDER BY topic, kind, queue`), topic)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[task.Subscription])
}

// Publish inserts, in one transaction, a delivery for each subscriber of
// each event, and notifies the listeners.
func (s *Store) Publish(ctx context.Context, evs []task.Event) ([]task.Task, error) {
	if err := checkEvents(evs); err != nil {
		return nil, err
	}
	var out []task.Task
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = s.publish(ctx, tx, 0, evs)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	return out, nil
}

// PublishTx is Publish inside the caller's transaction (the transactional
// outbox): the deliveries exist if and only if tx commits, and go to the
// subscribers tx sees. Unlike Publish, a conflict is returned, not retried.
func (s *Store) PublishTx(ctx context.Context, tx pgx.Tx, evs []task.Event) ([]task.Task, error) {
	if err := checkEvents(evs); err != nil {
		return nil, err
	}
	out, err := s.publish(ctx, tx, 0, evs)
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	return out, nil
}

func checkEvents(evs []task.Event) error {
	for _, e := range evs {
		if err := store.ValidateEvent(e); err != nil {
			return fmt.Errorf("publish: %w", err)
		}
	}
	return nil
}

// publish inserts the deliveries of evs in tx, in a run (0: none). A run
// that has ended takes no more: its events deliver nothing.
func (s *Store) publish(ctx context.Context, tx pgx.Tx, runID int64, evs []task.Event) ([]task.Task, error) {
	if runID != 0 {
		var state task.State
		if err := tx.QueryRow(ctx, s.sql(`SELECT state FROM $S.runs WHERE id = $1`), runID).Scan(&state); err != nil {
			return nil, err
		}
		if state.Terminal() {
			return nil, nil
		}
	}
	var ts []task.NewTask
	for _, e := range evs {
		subs, err := subscribers(ctx, s, tx, e.Topic)
		if err != nil {
			return nil, err
		}
		ts = append(ts, store.Deliveries(e, subs)...)
	}
	if len(ts) == 0 {
		return nil, nil
	}
	got, err := s.enqueueIn(ctx, tx, runID, ts)
	if err != nil {
		return nil, err
	}
	out := make([]task.Task, len(got))
	for i, e := range got {
		out[i] = e.Task
	}
	return out, nil
}
