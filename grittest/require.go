package grittest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/grit-run/grit/task"
)

// Task is an enqueued task with its args decoded.
type Task[A any] struct {
	task.Task
	Args A // the task's args, decoded (Task.Args is their JSON)
}

// Event is a published event with its payload decoded.
type Event[P any] struct {
	task.Event
	Payload P // decoded (Event.Payload is its JSON)
	// TaskID is the task whose attempt published it (grit.Publish, with
	// its success), 0 for the client's own (Client.Publish).
	TaskID int64
}

// Message is a message sent to a task (Client.SendToTask) with its
// payload decoded.
type Message[M any] struct {
	task.Message
	Payload M // decoded (Message.Payload is its JSON)
}

// Item is a quarantined item (grit.Quarantine) decoded.
type Item[I any] struct {
	task.Quarantined
	Item I // decoded (Quarantined.Item is its JSON)
}

// Enqueued returns the tasks of kind in the store, oldest first, with
// their args decoded into an A; args that do not decode fail the test.
func Enqueued[A any](t testing.TB, c *Client, kind string) []Task[A] {
	t.Helper()
	ts := c.tasks(t, kind)
	out := make([]Task[A], len(ts))
	for i, tk := range ts {
		out[i] = Task[A]{Task: tk, Args: mustDecode[A](t, tk.Args, "task %d (%s)'s args", tk.ID, kind)}
	}
	return out
}

// RequireEnqueued returns the oldest task of kind whose args, decoded
// into an A, match (nil matches any), and fails the test when there is
// none, listing the tasks of kind there are, or the kinds there are.
func RequireEnqueued[A any](t testing.TB, c *Client, kind string, match func(A) bool) Task[A] {
	t.Helper()
	ts := c.tasks(t, kind)
	return require(t, fmt.Sprintf("task of kind %q", kind), ts,
		func(tk task.Task) json.RawMessage { return tk.Args },
		func(tk task.Task, a A) Task[A] { return Task[A]{Task: tk, Args: a} },
		func(tk task.Task) string { return fmt.Sprintf("task %d, %s", tk.ID, tk.State) },
		match, func() string { return c.kinds(t) })
}

// Published returns the events published to topic, by handlers with
// their attempts' success and by the client, in the order they were,
// with their payloads decoded into a P.
func Published[P any](t testing.TB, c *Client, topic string) []Event[P] {
	t.Helper()
	var out []Event[P]
	for _, p := range c.events(topic) {
		out = append(out, Event[P]{Event: p.event, TaskID: p.by, Payload: mustDecode[P](t, p.event.Payload, "an event of topic %q", topic)})
	}
	return out
}

// RequirePublished returns the first event published to topic whose
// payload, decoded into a P, matches (nil matches any), and fails the
// test when there is none, listing what was published. An attempt that
// did not succeed published nothing.
func RequirePublished[P any](t testing.TB, c *Client, topic string, match func(P) bool) Event[P] {
	t.Helper()
	return require(t, fmt.Sprintf("event on topic %q", topic), c.events(topic),
		func(p published) json.RawMessage { return p.event.Payload },
		func(p published, v P) Event[P] { return Event[P]{Event: p.event, TaskID: p.by, Payload: v} },
		func(p published) string { return fmt.Sprintf("published by task %d", p.by) },
		match, c.topics)
}

// Sent returns the messages sent on topic (Client.SendToTask, grit
// send), received or not, in the order they were, with their payloads
// decoded into an M.
func Sent[M any](t testing.TB, c *Client, topic string) []Message[M] {
	t.Helper()
	var out []Message[M]
	for _, m := range c.messages(topic) {
		out = append(out, Message[M]{Message: m, Payload: mustDecode[M](t, m.Payload, "message %d on topic %q", m.ID, topic)})
	}
	return out
}

// RequireSent returns the first message sent on topic whose payload,
// decoded into an M, matches (nil matches any), and fails the test when
// there is none, listing what was sent.
func RequireSent[M any](t testing.TB, c *Client, topic string, match func(M) bool) Message[M] {
	t.Helper()
	return require(t, fmt.Sprintf("message on topic %q", topic), c.messages(topic),
		func(m task.Message) json.RawMessage { return m.Payload },
		func(m task.Message, v M) Message[M] { return Message[M]{Message: m, Payload: v} },
		func(m task.Message) string { return fmt.Sprintf("message %d to task %d", m.ID, m.TaskID) },
		match, c.sentTopics)
}

// Quarantined returns the items set aside by the tasks of kind (""
// for every kind), oldest first, decoded into an I.
func Quarantined[I any](t testing.TB, c *Client, kind string) []Item[I] {
	t.Helper()
	qs := c.quarantined(t, kind)
	out := make([]Item[I], len(qs))
	for i, q := range qs {
		out[i] = Item[I]{Quarantined: q, Item: mustDecode[I](t, q.Item, "quarantined item %d", q.ID)}
	}
	return out
}

// RequireQuarantined returns the oldest item set aside by a task of
// kind ("" for any) that, decoded into an I, matches (nil matches any),
// and fails the test when there is none, listing what was set aside.
func RequireQuarantined[I any](t testing.TB, c *Client, kind string, match func(I) bool) Item[I] {
	t.Helper()
	what := "quarantined item"
	if kind != "" {
		what = fmt.Sprintf("item quarantined by a task of kind %q", kind)
	}
	return require(t, what, c.quarantined(t, kind),
		func(q task.Quarantined) json.RawMessage { return q.Item },
		func(q task.Quarantined, v I) Item[I] { return Item[I]{Quarantined: q, Item: v} },
		func(q task.Quarantined) string {
			return fmt.Sprintf("item %d of task %d (%s), error %q", q.ID, q.TaskID, q.Kind, q.Error)
		},
		match, nil)
}

// require is the Require functions' one rule: the first of rs whose
// JSON (raw), decoded into a V, matches, wrapped with it; or the test
// fails, naming what it wanted, and listing what there was (each by
// label, with its JSON, and its decode error if it has one), or, when
// there was none, what there was instead (elsewhere, if given).
func require[R, W, V any](t testing.TB, what string, rs []R, raw func(R) json.RawMessage, wrap func(R, V) W,
	label func(R) string, match func(V) bool, elsewhere func() string) W {
	t.Helper()
	var b strings.Builder
	for _, r := range rs {
		v, err := decode[V](raw(r))
		if err == nil && (match == nil || match(v)) {
			return wrap(r, v)
		}
		fmt.Fprintf(&b, "\n\t%s: %s", label(r), raw(r))
		if err != nil {
			fmt.Fprintf(&b, " (does not decode into %s: %v)", typeName[V](), err)
		}
	}
	var zero W
	switch {
	case len(rs) > 0:
		t.Fatalf("grittest: no %s matches; of the %d there are, none matched:%s", what, len(rs), b.String())
	case elsewhere != nil:
		t.Fatalf("grittest: no %s; %s", what, elsewhere())
	default:
		t.Fatalf("grittest: no %s", what)
	}
	return zero
}

func decode[V any](raw json.RawMessage) (V, error) {
	var v V
	if len(raw) == 0 {
		return v, nil
	}
	err := json.Unmarshal(raw, &v)
	return v, err
}

// mustDecode is raw decoded into a V, or the test fails saying what
// would not decode.
func mustDecode[V any](t testing.TB, raw json.RawMessage, what string, args ...any) V {
	t.Helper()
	v, err := decode[V](raw)
	if err != nil {
		t.Fatalf("grittest: %s, %s, does not decode into %s: %v", fmt.Sprintf(what, args...), raw, typeName[V](), err)
	}
	return v
}

func typeName[V any]() string { return reflect.TypeFor[V]().String() }

// tasks returns the store's tasks of kind, oldest first.
func (c *Client) tasks(t testing.TB, kind string) []task.Task {
	t.Helper()
	ts, err := c.Tasks(context.Background(), task.Filter{Kind: kind})
	if err != nil {
		t.Fatalf("grittest: list the tasks of kind %q: %v", kind, err)
	}
	return ts
}

// kinds says which kinds the store's tasks are of.
func (c *Client) kinds(t testing.TB) string {
	t.Helper()
	ts, err := c.Tasks(context.Background(), task.Filter{})
	if err != nil {
		return fmt.Sprintf("the store's tasks could not be listed: %v", err)
	}
	return "tasks there are of kinds: " + list(ts, func(tk task.Task) string { return tk.Kind })
}

func (c *Client) events(topic string) []published {
	evs, _ := c.h.logs()
	var out []published
	for _, e := range evs {
		if e.event.Topic == topic {
			out = append(out, e)
		}
	}
	return out
}

func (c *Client) topics() string {
	evs, _ := c.h.logs()
	return "events were published on topics: " + list(evs, func(p published) string { return p.event.Topic })
}

func (c *Client) messages(topic string) []task.Message {
	_, ms := c.h.logs()
	var out []task.Message
	for _, m := range ms {
		if m.Topic == topic {
			out = append(out, m)
		}
	}
	return out
}

func (c *Client) sentTopics() string {
	_, ms := c.h.logs()
	return "messages were sent on topics: " + list(ms, func(m task.Message) string { return m.Topic })
}

func (c *Client) quarantined(t testing.TB, kind string) []task.Quarantined {
	t.Helper()
	qs, err := c.Client.Quarantined(context.Background(), task.QuarantineFilter{})
	if err != nil {
		t.Fatalf("grittest: list the quarantined items: %v", err)
	}
	var out []task.Quarantined
	for _, q := range qs {
		if kind == "" || q.Kind == kind {
			out = append(out, q)
		}
	}
	return out
}

// list is the distinct names of xs, in order of first appearance, or
// "none".
func list[X any](xs []X, name func(X) string) string {
	var names []string
	seen := map[string]bool{}
	for _, x := range xs {
		if n := name(x); !seen[n] {
			seen[n] = true
			names = append(names, fmt.Sprintf("%q", n))
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
