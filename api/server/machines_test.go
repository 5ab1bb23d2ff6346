package server_test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
)

// TestSendAndInstance: two events sent to an instance wait in its queue
// in the order sent (the server knows no machine to deliver them), and
// Instance reads them back.
func TestSendAndInstance(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{MaxPayload: 1024}, "")
	send := func(event, payload string) *pb.Instance {
		t.Helper()
		r, err := h.tasks.Send(ctx(t), &pb.SendRequest{Machine: "order", Key: "o-1", Event: event, Payload: []byte(payload)})
		if err != nil {
			t.Fatalf("send %s: %v", event, err)
		}
		return r.GetInstance()
	}
	if in := send("paid", `{"cents":1200}`); in.GetSent() != 1 || len(in.GetQueue()) != 1 {
		t.Fatalf("after one send: %v", in)
	}
	send("shipped", "")
	r, err := h.tasks.Instance(ctx(t), &pb.InstanceRequest{Machine: "order", Key: "o-1"})
	if err != nil {
		t.Fatal(err)
	}
	in := r.GetInstance()
	q := in.GetQueue()
	if in.GetMachine() != "order" || in.GetKey() != "o-1" || in.GetSent() != 2 || len(q) != 2 || in.GetVersion() != 2 {
		t.Fatalf("instance %v, want two events queued at version 2", in)
	}
	if q[0].GetSeq() != 1 || q[0].GetEvent() != "paid" || string(q[0].GetPayload()) != `{"cents":1200}` || q[0].GetSentAt() == nil ||
		q[1].GetSeq() != 2 || q[1].GetEvent() != "shipped" || len(q[1].GetPayload()) != 0 {
		t.Errorf("queue %v, want paid (with its payload) then shipped", q)
	}
	if in.GetEntering() != nil || in.GetHeld() || len(in.GetHistory()) != 0 {
		t.Errorf("instance %v: nothing was delivered, want no transition and no history", in)
	}
}

// TestSendAndInstanceErrors: bad requests are INVALID_ARGUMENT naming the
// field, and change nothing; an instance that is not there is NOT_FOUND.
func TestSendAndInstanceErrors(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{MaxPayload: 1024}, "")
	for _, c := range []struct {
		r     *pb.SendRequest
		field string
	}{
		{&pb.SendRequest{Key: "k", Event: "e"}, "machine"},
		{&pb.SendRequest{Machine: "a:b", Key: "k", Event: "e"}, "machine"},
		{&pb.SendRequest{Machine: "m", Event: "e"}, "key"},
		{&pb.SendRequest{Machine: "m", Key: strings.Repeat("k", 501), Event: "e"}, "key"},
		{&pb.SendRequest{Machine: "m", Key: "k"}, "event"},
		{&pb.SendRequest{Machine: "m", Key: "k", Event: "paid now"}, "event"},
		{&pb.SendRequest{Machine: "m", Key: "k", Event: "e", Payload: []byte(`{`)}, "payload"},
		{&pb.SendRequest{Machine: "m", Key: "k", Event: "e", Payload: []byte(`"` + strings.Repeat("x", 2000) + `"`)}, "payload"},
	} {
		_, err := h.tasks.Send(ctx(t), c.r)
		wantCode(t, err, codes.InvalidArgument)
		if f, _ := violation(err); f != c.field {
			t.Errorf("send %v: field %q, want %q (%v)", c.r, f, c.field, err)
		}
	}
	if rows, err := h.store.Instances(ctx(t), store.InstanceFilter{}); err != nil || len(rows) != 0 {
		t.Errorf("instances after refused sends: %v %v, want none", rows, err)
	}
	_, err := h.tasks.Instance(ctx(t), &pb.InstanceRequest{Machine: "order", Key: "nope"})
	wantCode(t, err, codes.NotFound, "nope")
	_, err = h.tasks.Instance(ctx(t), &pb.InstanceRequest{Machine: "order"})
	wantCode(t, err, codes.InvalidArgument, "key")
}

// withoutMachines passes on its store's store.Store, and not
// store.Machines.
type withoutMachines struct{ store.Store }

// TestSendWithoutMachines: a store that keeps no instances answers
// UNIMPLEMENTED.
func TestSendWithoutMachines(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "grit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s, err := server.New(server.Config{Store: withoutMachines{st}})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(sctx, lis) }()
	t.Cleanup(func() { cancel(); <-served })
	tasks := pb.NewTasksServiceClient(dial(t, lis.Addr().String(), ""))
	_, err = tasks.Send(ctx(t), &pb.SendRequest{Machine: "m", Key: "k", Event: "e"})
	wantCode(t, err, codes.Unimplemented, "state machines")
	_, err = tasks.Instance(ctx(t), &pb.InstanceRequest{Machine: "m", Key: "k"})
	wantCode(t, err, codes.Unimplemented, "state machines")
}
