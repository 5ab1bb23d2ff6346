package server

import (
	"context"
	"time"
	"unicode/utf8"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/fsm"
	"github.com/grit-run/grit/internal/machine"
	"github.com/grit-run/grit/store"
)

// The server does not know machines' definitions (they are Go values in
// the workers' programs), so Send only queues the event, as machine.Send
// does without a machine: a worker that has the machine delivers it.

// maxInstanceKey bounds an instance's key, as the stores do.
const maxInstanceKey = 500

// checkFSMName checks the name of a machine or an event by package fsm's
// rule, narrower than checkName's: a ':' would make a machine's task keys
// ambiguous.
func checkFSMName(field, v, example string) error {
	if v == "" {
		return bad(field, "missing: give one (e.g. %s)", example)
	}
	if p := fsm.NameProblem(v); p != "" {
		return bad(field, "%s is not a name: %s (e.g. %s)", quote(v), p, example)
	}
	return nil
}

func checkInstanceKey(v string) error {
	switch {
	case v == "":
		return bad("key", "missing: give the instance's key (e.g. order-1042)")
	case len(v) > maxInstanceKey:
		return bad("key", "%d bytes: want at most %d", len(v), maxInstanceKey)
	case !utf8.ValidString(v):
		return bad("key", "not UTF-8")
	}
	return nil
}

// send checks a SendRequest.
func (l limits) send(r *pb.SendRequest) error {
	for _, err := range []error{
		checkFSMName("machine", r.GetMachine(), "order"),
		checkInstanceKey(r.GetKey()),
		checkFSMName("event", r.GetEvent(), "paid"),
		l.checkPayload("payload", r.GetPayload()),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// machines is the store's instances, or UNIMPLEMENTED.
func (s *Server) machines(op string) error {
	if _, err := machine.Of(s.cfg.Store); err != nil {
		return unsupported(op, "machines", op+": the server's store keeps no state machines (both the SQLite and PostgreSQL stores do)")
	}
	return nil
}

func (x *tasks) Send(ctx context.Context, r *pb.SendRequest) (*pb.SendResponse, error) {
	const op = "send"
	if err := x.s.machines(op); err != nil {
		return nil, err
	}
	if err := x.s.lim.send(r); err != nil {
		return nil, statusOf(op, err)
	}
	if _, err := machine.Send(ctx, x.s.cfg.Store, nil, r.GetMachine(), r.GetKey(), r.GetEvent(), r.GetPayload(), time.Now()); err != nil {
		return nil, statusOf(op, err)
	}
	// Read it back for its version; a worker may have moved it on already.
	in, row, err := machine.Get(ctx, x.s.cfg.Store, r.GetMachine(), r.GetKey())
	if err != nil {
		return nil, statusOf(op, err)
	}
	return &pb.SendResponse{Instance: toInstance(row, in)}, nil
}

func (x *tasks) Instance(ctx context.Context, r *pb.InstanceRequest) (*pb.InstanceResponse, error) {
	const op = "instance"
	if err := x.s.machines(op); err != nil {
		return nil, err
	}
	if err := checkFSMName("machine", r.GetMachine(), "order"); err != nil {
		return nil, statusOf(op, err)
	}
	if err := checkInstanceKey(r.GetKey()); err != nil {
		return nil, statusOf(op, err)
	}
	in, row, err := machine.Get(ctx, x.s.cfg.Store, r.GetMachine(), r.GetKey())
	if err != nil {
		return nil, statusOf(op, aboutInstance(r.GetMachine(), r.GetKey(), err))
	}
	return &pb.InstanceResponse{Instance: toInstance(row, in)}, nil
}

func toInstance(r store.InstanceRow, in fsm.Instance) *pb.Instance {
	out := &pb.Instance{Machine: r.Machine, Key: r.Key, State: in.State, Held: in.Held, Sent: in.Sent,
		Version: r.Version, UpdatedAt: ts(r.Updated)}
	if e := in.Entering; e != nil {
		out.Entering = &pb.InstanceTransition{Seq: e.Seq, Event: e.Event.Event, From: e.From, To: e.To, TaskId: e.Task}
	}
	for _, ev := range in.Queue {
		out.Queue = append(out.Queue, &pb.InstanceEvent{Seq: ev.Seq, Event: ev.Event, Payload: ev.Payload, SentAt: ts(ev.At)})
	}
	for _, h := range in.History {
		out.History = append(out.History, &pb.InstanceEntry{Seq: h.Seq, Event: h.Event, From: h.From, To: h.To, TaskId: h.Task,
			Outcome: pb.InstanceOutcomeOf(h.Outcome), Why: h.Why, At: ts(h.At)})
	}
	return out
}
