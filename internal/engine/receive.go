package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/grit-run/grit/internal/decide"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// ErrReceiveTimeout is matched by the error of a receive that no message
// came to before its timeout (Receive).
var ErrReceiveTimeout = errors.New("engine: no message came before the receive's timeout")

// WaitError ends an attempt that waits, with its slot free: for a
// message of Topic (Receive) or for the tasks Tasks to end (Await). Its
// task is SENSING, its attempt given back, until what it waits for comes
// (a message sent, the last task's end) or Until, whichever comes first
// (decide.Receive, decide.Await). Receive and Await return it for the
// handler to return.
type WaitError struct {
	Topic string
	Tasks []int64
	Until time.Time // on the store's clock
}

func (e *WaitError) Error() string {
	if len(e.Tasks) > 0 {
		return fmt.Sprintf("wait for tasks %v to end, looking again at %s at the latest (a handler returns this error from grit.Await as it is: its task then waits with its slot free)",
			e.Tasks, e.Until.UTC().Format(time.RFC3339Nano))
	}
	return fmt.Sprintf("wait for a message on topic %q until %s (a handler returns this error from grit.Receive as it is: its task then waits with its slot free)",
		e.Topic, e.Until.UTC().Format(time.RFC3339Nano))
}

// decide writes the wait into f, the Finish that ends its attempt.
func (e *WaitError) decide(f *store.Finish, now time.Time) {
	if len(e.Tasks) > 0 {
		decide.Await(f, e.Tasks, e.Until, now)
		return
	}
	decide.Receive(f, e.Topic, e.Until, now)
}

// waitOf is err's WaitError, if it has one.
func waitOf(err error) *WaitError {
	var w *WaitError
	if errors.As(err, &w) {
		return w
	}
	return nil
}

// Receive answers the oldest message of topic sent to the handler's task,
// waiting for one for at most timeout. It records two steps: the
// deadline, when the handler first reaches it, then what it got (the
// message, taken from the store with its record in one transaction, or
// the timeout, as an error matching ErrReceiveTimeout), so that a later
// attempt answers the same without waiting again, and the records come in
// the same order whether or not the message was there at first. With none
// kept before the deadline, it returns a *WaitError, for the handler to
// return: the attempt ends and the task runs again when a message comes
// or at the deadline, and reaches Receive again.
func Receive(ctx context.Context, topic string, timeout time.Duration) (task.Message, error) {
	c, mb, err := receiver(ctx, topic, timeout)
	if err != nil {
		return task.Message{}, err
	}
	l := &c.a.steps
	l.mu.Lock()
	defer l.mu.Unlock()
	until, err := l.deadline(ctx, c, topic, timeout)
	if err != nil {
		return task.Message{}, err
	}
	at, err := l.reach(ctx, c, "receive:"+topic)
	if err != nil {
		return task.Message{}, err
	}
	rec := at.done
	if rec == nil {
		got, found, err := mb.Receive(ctx, c.a.t.ID, c.a.t.LeaseToken, topic, at.s)
		if err != nil {
			return task.Message{}, fmt.Errorf("receive %q: %w", topic, err)
		}
		if !found && c.e.storeNow().Before(until) {
			l.waiting = &WaitError{Topic: topic, Until: until}
			return task.Message{}, l.waiting
		}
		if !found {
			at.s.Result = json.RawMessage(`{"timeout":true}`)
			if got, err = c.e.stepper().RecordStep(ctx, c.a.t.ID, c.a.t.LeaseToken, at.s); err != nil {
				return task.Message{}, fmt.Errorf("receive %q: %w", topic, err)
			}
		}
		l.passed(got)
		rec = &got
	}
	return receivedOf(rec, topic, timeout)
}

// receiver is the attempt and the store's Mailbox of a receive, once its
// arguments are checked.
func receiver(ctx context.Context, topic string, timeout time.Duration) (*attemptCtx, store.Mailbox, error) {
	c, err := inWorker(ctx, fmt.Sprintf("receive %q", topic), "receive messages")
	if err != nil {
		return nil, nil, err
	}
	mb, ok := c.e.cfg.Store.(store.Mailbox)
	if !ok {
		return nil, nil, retry.Permanent(fmt.Errorf("receive %q: the store (%T) keeps no messages (it is not a store.Mailbox): use the SQLite or PostgreSQL store", topic, c.e.cfg.Store))
	}
	if err := store.ValidateMessage(c.a.t.ID, topic, json.RawMessage(`null`)); err != nil {
		return nil, nil, retry.Permanent(fmt.Errorf("receive: %w", err))
	}
	if timeout < 0 {
		return nil, nil, retry.Permanent(fmt.Errorf("receive %q: a negative timeout %v: want 0 (do not wait) or more", topic, timeout))
	}
	return c, mb, nil
}

// inWorker is the attempt of ctx, a handler's run in the worker: what a
// wait, or a write to the store (a result), needs. what names the call,
// and does what it does, for the errors.
func inWorker(ctx context.Context, what, does string) (*attemptCtx, error) {
	c, ok := ctx.Value(stepKey{}).(*attemptCtx)
	if !ok {
		return nil, fmt.Errorf("%s: %w (give it the context the handler got)", what, ErrNoAttempt)
	}
	if c.e.child != nil {
		return nil, retry.Permanent(fmt.Errorf("%s: a handler that runs isolated (HandlerConfig.Isolate) cannot %s yet: run it in the worker", what, does))
	}
	return c, nil
}

// deadline is the time a receive of topic waits until: recorded by the
// attempt that first reached it, else now plus timeout, recorded now.
func (l *stepLog) deadline(ctx context.Context, c *attemptCtx, topic string, timeout time.Duration) (time.Time, error) {
	at, err := l.reach(ctx, c, "receive.deadline:"+topic)
	if err != nil {
		return time.Time{}, err
	}
	rec := at.done
	if rec == nil {
		at.s.Result, err = json.Marshal(task.ReceiveDeadline{Topic: topic, Until: c.e.storeNow().Add(timeout)})
		if err != nil {
			return time.Time{}, err
		}
		got, err := c.e.stepper().RecordStep(ctx, c.a.t.ID, c.a.t.LeaseToken, at.s)
		if err != nil {
			return time.Time{}, fmt.Errorf("receive %q: %w", topic, err)
		}
		l.passed(got)
		rec = &got
	}
	var d task.ReceiveDeadline
	if err := json.Unmarshal(rec.Result, &d); err != nil || d.Until.IsZero() {
		return time.Time{}, retry.Permanent(fmt.Errorf("receive %q: step %d records %s, not a receive's deadline: %w", topic, rec.Seq, rec.Result, ErrStepOrder))
	}
	return d.Until, nil
}

// receivedOf is what the receive step rec recorded: its message, or its
// timeout's error.
func receivedOf(rec *task.Step, topic string, timeout time.Duration) (task.Message, error) {
	var r task.Received
	if err := json.Unmarshal(rec.Result, &r); err != nil || (r.Message == nil && !r.Timeout) {
		return task.Message{}, retry.Permanent(fmt.Errorf("receive %q: step %d records %s, not a receive's outcome: %w", topic, rec.Seq, rec.Result, ErrStepOrder))
	}
	if r.Timeout {
		return task.Message{}, fmt.Errorf("receive %q: %w (%v)", topic, ErrReceiveTimeout, timeout)
	}
	return *r.Message, nil
}
