package client_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/grit-run/grit/api/client"
	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/store"
)

// TestSendToTask: the client sends a message to a task, which the store
// keeps for it; nil is sent as null.
func TestSendToTask(t *testing.T) {
	t.Parallel()
	addr, st := serveWith(t, func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return h(ctx, req)
	})
	c, err := client.Dial(client.Config{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e, err := c.Enqueue(ctx, &pb.NewTask{Kind: "refund"})
	if err != nil {
		t.Fatal(err)
	}
	id := e.Task.GetId()
	m, err := c.SendToTask(ctx, id, "approval", []byte(`{"by":"ana"}`))
	if err != nil || m.GetTaskId() != id || m.GetTopic() != "approval" {
		t.Fatalf("send: %v (%v)", m, err)
	}
	if _, err := c.SendToTask(ctx, id, "note", nil); err != nil {
		t.Fatal(err)
	}
	kept, err := st.(store.Mailbox).Messages(ctx, id)
	if err != nil || len(kept) != 2 || string(kept[0].Payload) != `{"by":"ana"}` || string(kept[1].Payload) != "null" {
		t.Errorf("kept %+v (%v), want the two sent", kept, err)
	}
	if _, err := c.SendToTask(ctx, id+100, "approval", nil); err == nil {
		t.Error("a send to no task succeeded")
	}
}
