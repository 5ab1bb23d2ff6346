package grit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// ErrReceiveTimeout is matched by the error of a Receive that no message
// came to before its timeout. The timeout is recorded with the task, so
// a retried attempt times out at the same place, without waiting again.
var ErrReceiveTimeout = engine.ErrReceiveTimeout

// Receive answers the oldest message of topic sent to the handler's task
// (Client.SendToTask, grit send), decoded from its JSON into a T, waiting
// at most timeout for one (0: do not wait).
//
// While it waits the task holds no slot and uses no attempt: Receive
// returns an error, which the handler must return as it is (if err !=
// nil { return err }); the attempt ends, the task is SENSING, and it runs
// again, from its start, when a message of the topic is sent to it (at
// once) or at the timeout. Its steps replay, and Receive then answers
// the message. A message sent before the handler reaches Receive is kept
// for it. Messages of one topic are received oldest first; a handler may
// receive several topics, one after another.
//
// A receive is a durable step (see Step): the message it answered, or
// its timeout (an error matching ErrReceiveTimeout, which the handler
// may return or go on from), is recorded with the task, so a retried
// attempt gets the same one without waiting or taking another. So a
// receive, like a step, must come at the same place on every attempt.
// A wait is not a snooze: it does not count in the task's snoozes, and
// HandlerConfig.MaxSnoozes does not bound it. A handler that runs
// isolated (HandlerConfig.Isolate) cannot receive yet.
func Receive[T any](ctx context.Context, topic string, timeout time.Duration) (T, error) {
	var v T
	m, err := engine.Receive(ctx, topic, timeout)
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(m.Payload, &v); err != nil {
		return v, retry.Permanent(fmt.Errorf("grit: receive %q: message %d (%s) does not decode into %T: send what the handler receives, or receive a json.RawMessage: %w", topic, m.ID, m.Payload, v, err))
	}
	return v, nil
}

// SendToTask sends payload, as its JSON, to the task id on topic, for a
// handler of it to Receive: kept until then (oldest first among its
// topic's), or until the task is pruned. A task that waits for a message
// of the topic runs at once. A task that ended (its state terminal)
// refuses it with an error matching task.ErrWrongState; a dead letter
// keeps it, for a replay. (Client.Send is a state machine's.)
func (c *Client) SendToTask(ctx context.Context, id int64, topic string, payload any) (task.Message, error) {
	st, err := c.driver()
	if err != nil {
		return task.Message{}, err
	}
	mb, ok := st.(store.Mailbox)
	if !ok {
		return task.Message{}, fmt.Errorf("grit: send to task %d: the store (%T) keeps no messages (it is not a store.Mailbox): use the SQLite or PostgreSQL store", id, st)
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return task.Message{}, fmt.Errorf("grit: send to task %d on topic %q: the payload does not encode as JSON: %w", id, topic, err)
	}
	m, err := mb.Send(ctx, id, topic, b)
	if err != nil {
		return task.Message{}, fmt.Errorf("grit: %w", err)
	}
	c.engine.Wake()
	return m, nil
}

// Messages lists the messages sent to a task that no handler of it has
// received yet, oldest first.
func (c *Client) Messages(ctx context.Context, id int64) ([]task.Message, error) {
	st, err := c.driver()
	if err != nil {
		return nil, err
	}
	mb, ok := st.(store.Mailbox)
	if !ok {
		return nil, nil
	}
	return mb.Messages(ctx, id)
}
