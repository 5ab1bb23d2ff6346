package storetest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// mailboxTests check the optional store.Mailbox capability: messages
// kept for a task, taken oldest first with the step that records them,
// and the wake of a task that awaits them.
var mailboxTests = map[string]func(*testing.T, *harness){
	"ReceiveTakesTheOldestOfItsTopicWithItsStep": func(t *testing.T, h *harness) {
		mb := mailbox(h)
		c := h.enqueueTake("r")
		first := h.send(mb, c.ID, "a", `{"n":1}`)
		h.send(mb, c.ID, "b", `"other"`)
		h.send(mb, c.ID, "a", `{"n":2}`)
		if got := h.messages(mb, c.ID); len(got) != 3 || got[0].ID != first.ID || got[0].SentAt.IsZero() {
			t.Fatalf("messages kept %+v, want the three sent, oldest first", got)
		}
		rec, found := h.receive(mb, c, "a", 1)
		if !found || rec.Name != "receive:a" || rec.Attempt != 1 || rec.RecordedAt.IsZero() {
			t.Fatalf("receive: %+v, found %v, want the step recorded", rec, found)
		}
		if m := received(t, rec); m.ID != first.ID || string(m.Payload) != `{"n":1}` || m.Topic != "a" {
			t.Errorf("received %+v, want the oldest of topic a", m)
		}
		// The same seq again answers the record and takes nothing.
		again, found := h.receive(mb, c, "a", 1)
		if !found || received(t, again).ID != first.ID {
			t.Errorf("seq 1 again: %+v, want the first record", again)
		}
		if got := h.messages(mb, c.ID); len(got) != 2 {
			t.Errorf("after one receive, %d messages kept, want 2", len(got))
		}
		if m := received(t, h.mustReceive(mb, c, "a", 2)); string(m.Payload) != `{"n":2}` {
			t.Errorf("second receive of a: %s, want the second message", m.Payload)
		}
		if rec, found := h.receive(mb, c, "a", 3); found {
			t.Errorf("a third receive of a, with none kept: %+v, want none", rec)
		}
		if got := h.steps(h.s, c.ID); len(got) != 2 {
			t.Errorf("steps %+v, want the two receives alone (one that found nothing records nothing)", got)
		}
		if got := h.messages(mb, c.ID); len(got) != 1 || got[0].Topic != "b" {
			t.Errorf("messages left %+v, want b's", got)
		}
	},
	"ReceiveIsFencedByTheLease": func(t *testing.T, h *harness) {
		mb := mailbox(h)
		c := h.enqueueTake("r")
		h.send(mb, c.ID, "a", `1`)
		if _, _, err := mb.Receive(h.ctx, c.ID, c.LeaseToken+1000, "a", receiveStep("a", 1)); !errors.Is(err, task.ErrLeaseLost) {
			t.Errorf("a receive under another token: %v, want ErrLeaseLost", err)
		}
		if got := h.messages(mb, c.ID); len(got) != 1 {
			t.Errorf("a fenced receive took the message: %d kept", len(got))
		}
	},
	"SendRefusesWhatCannotBeKept": func(t *testing.T, h *harness) {
		mb := mailbox(h)
		done := h.enqueue(job("done"))[0]
		h.endKind("done", task.Success)
		if _, err := mb.Send(h.ctx, done.ID, "a", json.RawMessage(`1`)); !errors.Is(err, task.ErrWrongState) || !strings.Contains(err.Error(), "SUCCESS") {
			t.Errorf("a message to a task that succeeded: %v, want ErrWrongState naming SUCCESS", err)
		}
		if _, err := mb.Send(h.ctx, done.ID+1000, "a", json.RawMessage(`1`)); !errors.Is(err, task.ErrNotFound) {
			t.Errorf("a message to no task: %v, want ErrNotFound", err)
		}
		live := h.enqueue(job("live"))[0]
		for _, m := range []struct{ topic, payload string }{
			{"", `1`}, {strings.Repeat("t", task.MaxTopic+1), `1`}, {"a", `{`}, {"a", ``},
			{"a", `"` + strings.Repeat("x", task.MaxMessage) + `"`},
		} {
			if _, err := mb.Send(h.ctx, live.ID, m.topic, json.RawMessage(m.payload)); !errors.Is(err, task.ErrInvalid) {
				t.Errorf("topic %.10q, payload %.10q: %v, want ErrInvalid", m.topic, m.payload, err)
			}
		}
		if got := h.messages(mb, done.ID); len(got) != 0 {
			t.Errorf("refused messages were kept: %+v", got)
		}
	},
	"SendWakesATaskAwaitingItsTopic": func(t *testing.T, h *harness) {
		mb := mailbox(h)
		c := h.enqueueTake("r")
		later := h.now().Add(time.Hour)
		if err := h.finish(awaiting(c, "a", later))[0]; err != nil {
			t.Fatalf("finish awaiting a: %v", err)
		}
		if got := h.get(c.ID); got.State != task.Sensing || got.Snoozes != 0 || got.Attempt != 0 {
			t.Errorf("awaiting: %s, snoozes %d, attempt %d; want SENSING, no snooze counted, the attempt given back", got.State, got.Snoozes, got.Attempt)
		}
		h.send(mb, c.ID, "b", `1`) // another topic does not wake it
		if got := h.claim(store.ClaimRequest{Kinds: []string{"r"}, Limit: 1}); len(got) != 0 {
			t.Fatalf("a message of another topic made it due")
		}
		h.send(mb, c.ID, "a", `1`)
		if got := h.claim(store.ClaimRequest{Kinds: []string{"r"}, Limit: 1}); len(got) != 1 {
			t.Fatalf("a message of its topic did not make it due")
		}
	},
	"AMessageSentWhileTheAttemptEndsWakesItAtOnce": func(t *testing.T, h *harness) {
		mb := mailbox(h)
		c := h.enqueueTake("r")
		h.send(mb, c.ID, "a", `1`) // after the handler looked, before the attempt ended
		if err := h.finish(awaiting(c, "a", h.now().Add(time.Hour)))[0]; err != nil {
			t.Fatalf("finish awaiting a: %v", err)
		}
		if got := h.claim(store.ClaimRequest{Kinds: []string{"r"}, Limit: 1}); len(got) != 1 {
			t.Fatalf("a task awaiting a topic of which a message was kept is not due")
		}
	},
	"ASnoozeIsNotWokenByAMessage": func(t *testing.T, h *harness) {
		mb := mailbox(h)
		c := h.enqueueTake("r")
		h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Sensing, NextAt: h.now().Add(time.Hour), Refund: true})
		h.send(mb, c.ID, "a", `1`)
		if got := h.claim(store.ClaimRequest{Kinds: []string{"r"}, Limit: 1}); len(got) != 0 {
			t.Errorf("a message cut a snooze short")
		}
		if got := h.get(c.ID); got.Snoozes != 1 {
			t.Errorf("a snooze counted %d, want 1", got.Snoozes)
		}
	},
	"OnlyASensingTaskAwaits": func(t *testing.T, h *harness) {
		c := h.enqueueTake("r")
		f := awaiting(c, "a", h.now().Add(time.Hour))
		f.State = task.Retrying
		if err := h.finish(f)[0]; !errors.Is(err, task.ErrInvalid) {
			t.Errorf("a RETRYING finish that awaits: %v, want ErrInvalid", err)
		}
	},
	"PrunedWithTheirTask": func(t *testing.T, h *harness) {
		mb := mailbox(h)
		h.enqueue(job("done"), job("kept"))
		d := h.take("done")
		h.send(mb, d.ID, "a", `1`)
		h.end(d, task.Success)
		k := h.take("kept")
		h.send(mb, k.ID, "a", `1`)
		h.aged(d.ID)
		h.prune(h.s, store.PruneRequest{Rules: keepAll(soon), Limit: 100})
		if got := h.messages(mb, d.ID); len(got) != 0 {
			t.Errorf("a pruned task's messages are still there: %+v", got)
		}
		if got := h.messages(mb, k.ID); len(got) != 1 {
			t.Errorf("a running task's messages: %+v, want its one", got)
		}
	},
}

func mailbox(h *harness) store.Mailbox {
	h.t.Helper()
	mb, ok := h.s.(store.Mailbox)
	if !ok {
		h.t.Skipf("the store (%T) is not a store.Mailbox (optional)", h.s)
	}
	return mb
}

// enqueueTake enqueues a task of kind and claims it.
func (h *harness) enqueueTake(kind string) task.Task {
	h.t.Helper()
	h.enqueue(job(kind))
	return h.take(kind)
}

// awaiting ends c's attempt waiting for a message of topic until until.
func awaiting(c task.Task, topic string, until time.Time) store.Finish {
	return store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Sensing, NextAt: until, Refund: true, Awaits: topic,
		Attempt: task.Attempt{Outcome: task.OutcomeSnoozed}}
}

func receiveStep(topic string, seq int) task.Step {
	return task.Step{Seq: seq, Name: "receive:" + topic, Occurrence: seq, Attempt: 1}
}

func (h *harness) send(mb store.Mailbox, id int64, topic, payload string) task.Message {
	h.t.Helper()
	m, err := mb.Send(h.ctx, id, topic, json.RawMessage(payload))
	if err != nil {
		h.t.Fatalf("send %s on %q to task %d: %v", payload, topic, id, err)
	}
	return m
}

func (h *harness) receive(mb store.Mailbox, c task.Task, topic string, seq int) (task.Step, bool) {
	h.t.Helper()
	rec, found, err := mb.Receive(h.ctx, c.ID, c.LeaseToken, topic, receiveStep(topic, seq))
	if err != nil {
		h.t.Fatalf("receive %q: %v", topic, err)
	}
	return rec, found
}

func (h *harness) mustReceive(mb store.Mailbox, c task.Task, topic string, seq int) task.Step {
	h.t.Helper()
	rec, found := h.receive(mb, c, topic, seq)
	if !found {
		h.t.Fatalf("receive %q (seq %d): none found", topic, seq)
	}
	return rec
}

func (h *harness) messages(mb store.Mailbox, id int64) []task.Message {
	h.t.Helper()
	got, err := mb.Messages(h.ctx, id)
	if err != nil {
		h.t.Fatalf("messages of task %d: %v", id, err)
	}
	return got
}

// received is the message a receive step recorded.
func received(t *testing.T, s task.Step) task.Message {
	t.Helper()
	var r task.Received
	if err := json.Unmarshal(s.Result, &r); err != nil || r.Message == nil {
		t.Fatalf("step %q records %s, want a received message (%v)", s.Name, s.Result, err)
	}
	return *r.Message
}
