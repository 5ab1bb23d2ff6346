package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/grit-run/grit/task"
)

// Mailbox is an optional capability: messages sent to tasks, kept in the
// store until a handler of the task receives them (grit.Receive), and
// deleted with their task by retention.
//
// A task that waits for a message ends its attempt SENSING with a Finish
// whose Awaits names the topic; Send makes it due at once, and so does
// that Finish when a message of the topic is kept already, so that a
// message sent while the attempt ended is never left waiting for the
// deadline.
type Mailbox interface {
	// Send keeps a message for a task that has not ended and, when the
	// task is SENSING awaiting the message's topic, makes it due now
	// (waking workers, as Waker does). A missing task is
	// task.ErrNotFound; one that ended (its state Terminal: a dead letter
	// keeps its messages, for a replay) is SendRefusal's error, and keeps
	// nothing.
	Send(ctx context.Context, taskID int64, topic string, payload json.RawMessage) (task.Message, error)
	// Receive takes, for a task RUNNING under token, the oldest message
	// of topic kept for it, and records it as step s, with the
	// Received of it as its result (ReceivedResult), in one
	// transaction: the message is gone exactly when the step is
	// recorded. found is false, and nothing is written, when no message
	// of the topic is kept. A step already recorded at s.Seq is
	// answered as recorded (found true) and no message is taken, so a
	// call repeated after a lost answer takes nothing twice. A task not
	// RUNNING under token is task.ErrLeaseLost.
	Receive(ctx context.Context, taskID, token int64, topic string, s task.Step) (rec task.Step, found bool, err error)
	// Messages lists the messages kept for a task, not yet received,
	// oldest first.
	Messages(ctx context.Context, taskID int64) ([]task.Message, error)
}

// ValidateMessage checks a message before it is kept.
func ValidateMessage(taskID int64, topic string, payload json.RawMessage) error {
	switch {
	case taskID < 1:
		return invalid("message to task %d: want a task id of 1 or more", taskID)
	case topic == "" || len(topic) > task.MaxTopic:
		return invalid("message to task %d: topic %q: want 1 to %d bytes", taskID, topic, task.MaxTopic)
	case len(payload) == 0:
		return invalid("message to task %d on topic %q: no payload: send JSON (null for none)", taskID, topic)
	case len(payload) > task.MaxMessage:
		return invalid("message to task %d on topic %q: a payload of %d bytes: the most a message holds is %d; send a reference (a key, a URL) to a large one instead",
			taskID, topic, len(payload), task.MaxMessage)
	}
	if p := task.JSONProblem(payload); p != "" {
		return invalid("message to task %d on topic %q: payload: %s", taskID, topic, p)
	}
	return nil
}

// SendRefusal is the error of a message sent to a task that ended, in
// state: a *task.StateError (task.ErrWrongState) that says why.
func SendRefusal(state task.State) error {
	return fmt.Errorf("%w: a message is kept only for a task that has not ended (no handler of it will run again to receive it)", &task.StateError{State: state})
}

// ReceivedResult is the result of the step that records m received:
// what every driver's Receive writes.
func ReceivedResult(m task.Message) (json.RawMessage, error) {
	b, err := json.Marshal(task.Received{Message: &m})
	if err != nil {
		return nil, fmt.Errorf("message %d: %w", m.ID, err)
	}
	return b, nil
}

// SentAudit is the audit log's entry for the message m sent by an
// operator (grit send, the API's SendToTask): one rule for both.
func SentAudit(m task.Message) AuditEntry {
	return AuditEntry{Action: "send", Target: fmt.Sprintf("task %d", m.TaskID), Count: 1, Detail: fmt.Sprintf("message %d on %s", m.ID, m.Topic)}
}
