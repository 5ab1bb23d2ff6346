package client_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/grit-run/grit/api/client"
	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/store/sqlite"
)

// A server on a loopback address, and a client that batches three callers'
// tasks into one call; the same idempotency key again names the same task.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "grit-example")
	defer os.RemoveAll(dir)
	st, _ := sqlite.Open(ctx, "sqlite:"+filepath.Join(dir, "grit.db"))
	defer st.Close()
	srv, _ := server.New(server.Config{Store: st})
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- srv.Serve(sctx, lis) }()
	defer func() { stop(); <-done }()

	c, err := client.Dial(client.Config{Addr: lis.Addr().String()})
	if err != nil {
		fmt.Println(err)
		return
	}
	var futures []interface {
		Wait(context.Context) (client.Enqueued, error)
	}
	for _, to := range []string{"a", "b", "c"} {
		futures = append(futures, c.Send(ctx, &pb.NewTask{Kind: "email.send", Args: fmt.Appendf(nil, `{"to": %q}`, to)}))
	}
	for _, f := range futures {
		e, err := f.Wait(ctx)
		fmt.Println(e.Task.GetKind(), e.Task.GetState(), err)
	}
	first, _ := c.Enqueue(ctx, &pb.NewTask{Kind: "email.send", IdempotencyKey: "welcome-17"})
	again, _ := c.Enqueue(ctx, &pb.NewTask{Kind: "email.send", IdempotencyKey: "welcome-17"})
	fmt.Println("same task:", first.Task.GetId() == again.Task.GetId(), "existed:", first.Existed, again.Existed)
	_, err = c.Enqueue(ctx, &pb.NewTask{Kind: "email.send", Args: []byte(`{"to": "b"}`), IdempotencyKey: "welcome-17"})
	fmt.Println(client.Code(err))
	c.Close(ctx)
	// Output:
	// email.send TASK_STATE_READY <nil>
	// email.send TASK_STATE_READY <nil>
	// email.send TASK_STATE_READY <nil>
	// same task: true existed: false true
	// AlreadyExists
}
