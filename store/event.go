package store

import (
	"context"
	"fmt"
	"regexp"

	"github.com/grit-run/grit/task"
)

// Publisher is part of Store: topics and their subscribers, kept in the
// store so that every process of a fleet publishes to the same
// subscribers. Finish applies the events of an item (Finish.Publish) in
// its transaction, only if the item applies; their deliveries join the run
// of the item's task (if any) before the run is settled, so the run ends
// when they have, and their failures count toward its MaxFailures.
type Publisher interface {
	// Subscribe adds a subscription; adding one that exists (the same
	// topic, kind and queue) sets its group.
	Subscribe(ctx context.Context, s task.Subscription) error
	// Unsubscribe removes a subscription, if it exists.
	Unsubscribe(ctx context.Context, s task.Subscription) error
	// Subscriptions lists a topic's subscriptions ("": every topic's), by
	// topic, kind and queue.
	Subscriptions(ctx context.Context, topic string) ([]task.Subscription, error)
	// Publish inserts, in one transaction, a delivery for each subscriber
	// of each event, and returns them (for a key published before, the
	// deliveries made then). An event without subscribers delivers nothing.
	Publish(ctx context.Context, evs []task.Event) ([]task.Task, error)
}

var topicRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,199}$`)

// ValidateEvent checks an event before it is published; drivers call it.
func ValidateEvent(e task.Event) error {
	if !topicRE.MatchString(e.Topic) {
		return invalid("event topic %q: want 1 to 200 letters, digits and _ . : / -, starting with a letter or digit (e.g. ingest.batch-ready)", e.Topic)
	}
	if p := task.JSONProblem(e.Payload); p != "" {
		return invalid("event on %q: payload: %s", e.Topic, p)
	}
	return nil
}

// CheckSubscription checks a subscription and fills in its default queue;
// drivers call it.
func CheckSubscription(s task.Subscription) (task.Subscription, error) {
	if s.Queue == "" {
		s.Queue = "default"
	}
	if err := ValidateSubscription(s); err != nil {
		return s, fmt.Errorf("subscribe: %w", err)
	}
	return s, nil
}

// ValidateSubscription checks a subscription.
func ValidateSubscription(s task.Subscription) error {
	if err := ValidateEvent(task.Event{Topic: s.Topic}); err != nil {
		return err
	}
	if s.Kind == "" {
		return invalid("subscription to %q: no kind", s.Topic)
	}
	return nil
}

// Deliveries are the tasks an event makes for its subscribers.
func Deliveries(e task.Event, subs []task.Subscription) []task.NewTask {
	out := make([]task.NewTask, len(subs))
	for i, s := range subs {
		out[i] = task.NewTask{Kind: s.Kind, Queue: s.Queue, Group: s.Group, Tenant: e.Tenant, Args: e.Payload}
		if e.Key != "" {
			out[i].IdempotencyKey = "event:" + e.Topic + ":" + e.Key + ":" + s.Kind + ":" + s.Queue
			out[i].ReturnExisting = true // the key is the event's: published again, it delivers nothing new
		}
	}
	return out
}
