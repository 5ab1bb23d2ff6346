package grit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// PublishOption sets one field of a published event.
type PublishOption func(*task.Event)

// EventKey makes publishing idempotent: publishing again with the same key
// delivers nothing new to a subscriber that has the event already.
func EventKey(k string) PublishOption { return func(e *task.Event) { e.Key = k } }

// EventTenant makes the event's deliveries the tenant's work. An event a
// handler publishes is its task's tenant's unless it says otherwise.
func EventTenant(t string) PublishOption { return func(e *task.Event) { e.Tenant = t } }

// Subscribe subscribes Kind (in Queue) to a topic; subscribing again
// changes nothing. Subscriptions are kept in the store, so every process
// that publishes to the topic delivers to them.
func (c *Client) Subscribe(ctx context.Context, s task.Subscription) error {
	if _, err := c.driver(); err != nil {
		return err
	}
	return c.store.Subscribe(ctx, s)
}

// Unsubscribe removes a subscription.
func (c *Client) Unsubscribe(ctx context.Context, s task.Subscription) error {
	if _, err := c.driver(); err != nil {
		return err
	}
	return c.store.Unsubscribe(ctx, s)
}

// Publish publishes an event to a topic: one task per subscriber, with the
// payload, encoded as JSON, as its args. It returns the deliveries.
func (c *Client) Publish(ctx context.Context, topic string, payload any, opts ...PublishOption) ([]task.Task, error) {
	if _, err := c.driver(); err != nil {
		return nil, err
	}
	p := c.store
	e, err := newEvent(topic, payload, opts)
	if err != nil {
		return nil, err
	}
	ts, err := p.Publish(ctx, []task.Event{e})
	if err != nil {
		return nil, fmt.Errorf("grit: %w", err)
	}
	c.engine.Wake()
	return ts, nil
}

// PublishTx publishes an event in the caller's transaction: the
// deliveries exist if and only if tx commits (a transactional outbox). As
// for EnqueueTx, the store must be the PostgreSQL one and tx a pgx.Tx on
// its database.
func (c *Client) PublishTx(ctx context.Context, tx any, topic string, payload any, opts ...PublishOption) ([]task.Task, error) {
	if _, err := c.driver(); err != nil {
		return nil, err
	}
	p, ok := c.store.(store.InTx)
	if !ok {
		return nil, fmt.Errorf("grit: publish to %s in a transaction: the store cannot (use the PostgreSQL store): %w", topic, task.ErrInvalid)
	}
	e, err := newEvent(topic, payload, opts)
	if err != nil {
		return nil, err
	}
	ts, err := p.PublishIn(ctx, tx, []task.Event{e})
	if err != nil {
		return nil, fmt.Errorf("grit: %w", err)
	}
	return ts, nil
}

// Publish, called by a handler with its context, publishes an event when
// the attempt succeeds, in the same transaction as its success: if the
// attempt fails, or its result is rejected (its lease was lost), the event
// is never published.
func Publish(ctx context.Context, topic string, payload any, opts ...PublishOption) error {
	e, err := newEvent(topic, payload, opts)
	if err != nil {
		return err
	}
	if err := engine.Publish(ctx, e); err != nil {
		return fmt.Errorf("grit: %w", err)
	}
	return nil
}

func newEvent(topic string, payload any, opts []PublishOption) (task.Event, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return task.Event{}, fmt.Errorf("grit: publish to %s: the payload does not encode as JSON: %w", topic, err)
	}
	e := task.Event{Topic: topic, Payload: b}
	for _, o := range opts {
		o(&e)
	}
	if err := store.ValidateEvent(e); err != nil {
		return task.Event{}, fmt.Errorf("grit: %w", err)
	}
	return e, nil
}
