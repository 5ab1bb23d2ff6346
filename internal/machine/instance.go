// Package machine runs state machines' instances (package fsm): events
// are queued on the instance, and delivered one at a time by the one rule
// of advance, in a write of the instance at the version read with the
// task of the state it enters (store.Machines), so that two workers never
// both move an instance.
package machine

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/grit-run/grit/fsm"
	"github.com/grit-run/grit/task"
)

// keepHistory bounds Instance.History.
const keepHistory = 100

// Watch is how often a worker looks at an instance whose state's task has
// not ended, when nothing told it the task ended: a backstop for a task
// finished by a process that does not have the machine (a remote worker,
// a worker without it in its config). The worker that finishes a state's
// task and has the machine moves the instance at once. Each look is a
// write of the instance, so it is not often.
const Watch = 15 * time.Second

func decode(b []byte) (fsm.Instance, error) {
	var in fsm.Instance
	if len(b) == 0 {
		return in, nil
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return fsm.Instance{}, fmt.Errorf("instance state: %w", err)
	}
	return in, nil
}

// Decode reads an instance's state as the store keeps it.
func Decode(b []byte) (fsm.Instance, error) { return decode(b) }

func record(in *fsm.Instance, e fsm.Entry) {
	in.History = append(in.History, e)
	if len(in.History) > keepHistory {
		in.History = append([]fsm.Entry(nil), in.History[len(in.History)-keepHistory:]...)
	}
}

// send queues an event.
func send(in *fsm.Instance, event string, payload json.RawMessage, at time.Time) fsm.Event {
	in.Sent++
	ev := fsm.Event{Seq: in.Sent, Event: event, Payload: payload, At: at}
	in.Queue = append(in.Queue, ev)
	return ev
}

// advance is the one rule of an instance: the transition under way ends
// with its task (outcome: the task's state, "" while it has not ended,
// Gone when it was pruned), then the events waiting are delivered in
// order until one enters a state with a handler, whose task is returned
// to be enqueued (nil for none). now stamps what it records.
func advance(in *fsm.Instance, m fsm.Machine, outcome task.State, now time.Time) *fsm.Entering {
	if e := in.Entering; e != nil {
		switch outcome {
		case "", task.Ready, task.Running, task.Retrying, task.Sensing, task.Pending:
			in.Held = false
			return nil
		case task.DeadLetter:
			in.Held = true
			return nil
		case task.Success, task.Skipped, Gone:
			in.State = e.To
			record(in, fsm.Entry{Seq: e.Seq, Event: e.Event.Event, From: e.From, To: e.To, Task: e.Task, Outcome: fsm.Entered, At: now})
			if e.Next != nil {
				in.Queue = append([]fsm.Event{*e.Next}, in.Queue...)
			}
		default: // FAILED, CANCELLED, UPSTREAM_FAILED
			in.State = m.FailedState()
			record(in, fsm.Entry{Seq: e.Seq, Event: e.Event.Event, From: e.From, To: in.State, Task: e.Task, Outcome: fsm.Failed,
				Why: fmt.Sprintf("the handler of %q ended %s", e.To, outcome), At: now})
		}
		in.Entering, in.Held = nil, false
	}
	for len(in.Queue) > 0 {
		ev := in.Queue[0]
		in.Queue = in.Queue[1:]
		to, ok := m.Target(in.State, ev.Event)
		if !ok {
			record(in, fsm.Entry{Seq: ev.Seq, Event: ev.Event, From: in.State, Outcome: fsm.Ignored,
				Why: fmt.Sprintf("no transition from %q on %q", in.State, ev.Event), At: now})
			continue
		}
		if m.KindOf(to) == "" {
			record(in, fsm.Entry{Seq: ev.Seq, Event: ev.Event, From: in.State, To: to, Outcome: fsm.Entered, At: now})
			in.State = to
			continue
		}
		in.Entering = &fsm.Entering{Event: ev, From: in.State, To: to}
		return in.Entering
	}
	return nil
}

// Gone is the outcome of a state's task pruned before a worker saw it end:
// it had ended, and retention keeps failures longer than successes.
const Gone task.State = "GONE"

// due is when a worker next has work on in at now: soon while its state's
// task runs (a backstop for a task that ended in another process), at
// once when events wait, never when it is idle.
func due(in *fsm.Instance, now time.Time) time.Time {
	switch {
	case in.Entering != nil:
		return now.Add(Watch)
	case len(in.Queue) > 0:
		return now
	}
	return time.Time{}
}
