package client_test

import (
	"context"
	"errors"
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

// A remote worker's handler sets one bad row aside and goes on; the task
// succeeds, and the row waits, quarantined, for an operator.
func ExampleQuarantine() {
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
	c, _ := client.Dial(client.Config{Addr: lis.Addr().String()})
	defer c.Close(ctx)

	c.Enqueue(ctx, &pb.NewTask{Kind: "import", Args: []byte(`{"rows": [1, 2, 3]}`)})
	claim, _ := c.Workers().Claim(ctx, &pb.ClaimRequest{WorkerId: "w1", Kinds: []string{"import"}, Limit: 1})
	hctx := c.WithAttempt(ctx, "w1", claim.GetTasks()[0], &pb.QuarantinePolicy{Kind: "import.row", Max: 10})
	// The handler: row 2 has no account.
	if err := client.Quarantine(hctx, map[string]int{"row": 2}, errors.New("row 2: no account")); err != nil {
		fmt.Println(err)
	}
	client.Saw(hctx, 3)
	done1, _ := client.Completed(hctx, "imported 2 rows")
	answers, _ := c.Report(ctx, "w1", []*pb.Result{done1})
	fmt.Println(answers[0].GetTask().GetState())
	list, _ := c.Tasks().ListQuarantined(ctx, &pb.ListQuarantinedRequest{})
	fmt.Println(string(list.GetItems()[0].GetItem()), list.GetItems()[0].GetError())
	// Output:
	// TASK_STATE_SUCCESS
	// {"row":2} row 2: no account
}
