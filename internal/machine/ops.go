package machine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/grit-run/grit/fsm"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// ErrNoMachines is matched by the error of a store that keeps no
// instances.
var ErrNoMachines = errors.New("machine: the store keeps no state machines (it is not a store.Machines)")

// ErrNotFound is matched by the error of an instance that is not there
// (and by task.ErrNotFound).
var ErrNotFound = fmt.Errorf("instance not found: %w", task.ErrNotFound)

// tries bounds the writes of one call that other writes keep coming before.
const tries = 50

// Of is the store's store.Machines, or ErrNoMachines.
func Of(st store.Store) (store.Machines, error) {
	ms, ok := st.(store.Machines)
	if !ok {
		return nil, ErrNoMachines
	}
	return ms, nil
}

const keyPrefix = "fsm:"

// Key is the idempotency key of the task that delivers event seq of
// instance key of machine: one task per event, whoever delivers it.
func Key(machine, key string, seq int64) string {
	return keyPrefix + machine + ":" + key + ":" + strconv.FormatInt(seq, 10)
}

// ParseKey reads a key Key made.
func ParseKey(k string) (machine, key string, seq int64, ok bool) {
	rest, ok := strings.CutPrefix(k, keyPrefix)
	if !ok {
		return "", "", 0, false
	}
	m, rest, ok := strings.Cut(rest, ":")
	i := strings.LastIndexByte(rest, ':')
	if !ok || i < 1 {
		return "", "", 0, false
	}
	seq, err := strconv.ParseInt(rest[i+1:], 10, 64)
	if err != nil || seq < 1 {
		return "", "", 0, false
	}
	return m, rest[:i], seq, true
}

// change reads instance key of machine (a new one when it is not there,
// if make), lets fn change it, and writes it with the task of the state it
// enters, again while other writes come first. m is the machine, when the
// caller knows it (nil: events are queued, and delivered by a worker that
// knows it).
func change(ctx context.Context, st store.Store, m *fsm.Machine, machine, key string, create bool, now time.Time,
	fn func(in *fsm.Instance) error) (fsm.Instance, error) {
	ms, err := Of(st)
	if err != nil {
		return fsm.Instance{}, err
	}
	for range tries {
		r, err := ms.GetInstance(ctx, machine, key)
		switch {
		case errors.Is(err, task.ErrNotFound) && create:
			r = store.InstanceRow{Machine: machine, Key: key}
		case errors.Is(err, task.ErrNotFound):
			return fsm.Instance{}, fmt.Errorf("instance %q of machine %q: %w", key, machine, ErrNotFound)
		case err != nil:
			return fsm.Instance{}, err
		}
		in, err := decode(r.State)
		if err != nil {
			return fsm.Instance{}, err
		}
		if err := fn(&in); err != nil {
			return fsm.Instance{}, err
		}
		got, ok, err := write(ctx, st, ms, m, r, in, now)
		if err != nil || ok {
			return got, err
		}
	}
	return fsm.Instance{}, fmt.Errorf("instance %q of machine %q: other writes kept coming first; try again", key, machine)
}

// write advances in (when m is known) and writes it at r's version.
func write(ctx context.Context, st store.Store, ms store.Machines, m *fsm.Machine, r store.InstanceRow, in fsm.Instance, now time.Time) (fsm.Instance, bool, error) {
	var ts []task.NewTask
	if m != nil {
		if in.State == "" {
			in.State = m.Initial
		}
		outcome, err := outcomeOf(ctx, st, in.Entering)
		if err != nil {
			return fsm.Instance{}, false, err
		}
		if e := advance(&in, *m, outcome, now); e != nil {
			n, err := taskFor(*m, r.Key, e)
			if err != nil {
				return fsm.Instance{}, false, err
			}
			ts = append(ts, n)
		}
	}
	var out fsm.Instance
	_, ok, err := ms.WriteInstance(ctx, store.InstanceWrite{Machine: r.Machine, Key: r.Key, Version: r.Version, Tasks: ts,
		Then: func(enq []task.Enqueued) (json.RawMessage, time.Time, error) {
			out = in
			if len(enq) > 0 {
				e := *in.Entering
				e.Task = enq[0].ID
				out.Entering = &e
			}
			b, err := json.Marshal(out)
			return b, due(&out, now), err
		}})
	if err != nil {
		// A store may end the call at ctx's end while its writer still
		// runs Then: out is not read then.
		return fsm.Instance{}, false, err
	}
	return out, ok, err
}

// outcomeOf is the state of e's task, "" while e has no task or it has
// not ended, Gone when it is not there.
func outcomeOf(ctx context.Context, st store.Store, e *fsm.Entering) (task.State, error) {
	if e == nil || e.Task == 0 {
		return "", nil
	}
	t, err := st.GetTask(ctx, e.Task)
	switch {
	case errors.Is(err, task.ErrNotFound):
		return Gone, nil
	case err != nil:
		return "", err
	}
	return t.State, nil
}

// taskFor is the task that enters e.To of instance key.
func taskFor(m fsm.Machine, key string, e *fsm.Entering) (task.NewTask, error) {
	args, err := json.Marshal(fsm.Input{Machine: m.Name, Key: key, Seq: e.Seq, Event: e.Event.Event, From: e.From, To: e.To, Payload: e.Payload})
	if err != nil {
		return task.NewTask{}, err
	}
	return task.NewTask{Name: e.To, Kind: m.KindOf(e.To), Args: args, IdempotencyKey: Key(m.Name, key, e.Seq), ReturnExisting: true}, nil
}

// Send sends event to instance key of machine (made in its initial state
// when it is not there): it is delivered after the events sent before it.
// With m, the instance advances in the same write; without (a command
// that does not know the machine), a worker that knows it delivers the
// event at its next tick.
func Send(ctx context.Context, st store.Store, m *fsm.Machine, machine, key, event string, payload json.RawMessage, now time.Time) (fsm.Instance, error) {
	if err := checkSend(machine, key, event, payload); err != nil {
		return fsm.Instance{}, err
	}
	return change(ctx, st, m, machine, key, true, now, func(in *fsm.Instance) error {
		send(in, event, payload, now)
		return nil
	})
}

func checkSend(machine, key, event string, payload json.RawMessage) error {
	switch {
	case machine == "" || event == "":
		return fmt.Errorf("send: machine %q, event %q: want both: %w", machine, event, task.ErrInvalid)
	case key == "" || len(key) > 500:
		return fmt.Errorf("send: key %q: want 1 to 500 characters: %w", key, task.ErrInvalid)
	}
	if p := task.JSONProblem(payload); p != "" {
		return fmt.Errorf("send: payload: %s: %w", p, task.ErrInvalid)
	}
	return nil
}

// Advance moves instance key of machine m on: the state it was entering
// is entered when its task succeeded, and the events waiting go.
func Advance(ctx context.Context, st store.Store, m fsm.Machine, key string, now time.Time) (fsm.Instance, error) {
	return change(ctx, st, &m, m.Name, key, false, now, func(*fsm.Instance) error { return nil })
}

// Next asks, from the handler of the state an instance is entering (its
// task taskID, whose key says which instance), for event to be delivered
// first once the handler has succeeded: FTL's Next.
func Next(ctx context.Context, st store.Store, taskID int64, event string, payload json.RawMessage, now time.Time) error {
	t, err := st.GetTask(ctx, taskID)
	if err != nil {
		return err
	}
	machine, key, seq, ok := ParseKey(t.IdempotencyKey)
	if !ok {
		return fmt.Errorf("next %q: task %d does not enter a state of a machine: %w", event, taskID, task.ErrInvalid)
	}
	if err := checkSend(machine, key, event, payload); err != nil {
		return err
	}
	_, err = change(ctx, st, nil, machine, key, false, now, func(in *fsm.Instance) error {
		if in.Entering == nil || in.Entering.Seq != seq {
			return fmt.Errorf("next %q: instance %q of %q is not entering a state by event %d (any more): %w", event, key, machine, seq, task.ErrWrongState)
		}
		in.Sent++
		in.Entering.Next = &fsm.Event{Seq: in.Sent, Event: event, Payload: payload, At: now}
		return nil
	})
	return err
}

// Get is instance key of machine.
func Get(ctx context.Context, st store.Store, machine, key string) (fsm.Instance, store.InstanceRow, error) {
	ms, err := Of(st)
	if err != nil {
		return fsm.Instance{}, store.InstanceRow{}, err
	}
	r, err := ms.GetInstance(ctx, machine, key)
	if errors.Is(err, task.ErrNotFound) {
		return fsm.Instance{}, r, fmt.Errorf("instance %q of machine %q: %w", key, machine, ErrNotFound)
	}
	if err != nil {
		return fsm.Instance{}, r, err
	}
	in, err := decode(r.State)
	return in, r, err
}
