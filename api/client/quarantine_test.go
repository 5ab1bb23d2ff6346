package client_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/grit-run/grit/api/client"
	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/retry"
)

// importRows is a remote worker's handler: it sets aside the rows that
// are multiples of 7, and says it saw them all.
func importRows(ctx context.Context, rows []int) error {
	for _, n := range rows {
		if n%7 == 0 {
			if err := client.Quarantine(ctx, map[string]int{"row": n}, fmt.Errorf("row %d: no account %d", n, 1000+n)); err != nil {
				return err
			}
		}
	}
	return client.Saw(ctx, len(rows))
}

// work claims one task of kind and runs importRows on rows under pol,
// reporting its end: the result's state, the handler's error.
func work(t *testing.T, c *client.Client, kind string, rows []int, pol *pb.QuarantinePolicy) (pb.TaskState, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.Enqueue(ctx, &pb.NewTask{Kind: kind}); err != nil {
		t.Fatal(err)
	}
	cl, err := c.Workers().Claim(ctx, &pb.ClaimRequest{WorkerId: "w1", Kinds: []string{kind}, Limit: 1})
	if err != nil || len(cl.GetTasks()) != 1 {
		t.Fatalf("claim: %v %v", cl, err)
	}
	hctx := c.WithAttempt(ctx, "w1", cl.GetTasks()[0], pol)
	herr := importRows(hctx, rows)
	r, err := client.Completed(hctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if herr != nil {
		r.End = &pb.Result_Fail{Fail: &pb.Failed{ErrorClass: pb.ErrorClass_ERROR_CLASS_PERMANENT, Message: herr.Error()}}
	}
	as, err := c.Report(ctx, "w1", []*pb.Result{r})
	if err != nil || client.ReportError(as[0]) != nil {
		t.Fatalf("report: %v %v", as, err)
	}
	return as[0].GetTask().GetState(), herr
}

// TestRemoteHandlerQuarantines: a remote handler that sets one row of
// ten aside succeeds, and the row is listed by its fingerprint and
// replayed as its own task; past its policy's max the handler is told so
// at once, and its task fails; past its max_share it fails when it
// completes.
func TestRemoteHandlerQuarantines(t *testing.T) {
	t.Parallel()
	addr, _ := serveWith(t, func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return h(ctx, req)
	})
	c, err := client.Dial(client.Config{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	st, err := work(t, c, "import", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, &pb.QuarantinePolicy{Kind: "import.row", Max: 1})
	if err != nil || st != pb.TaskState_TASK_STATE_SUCCESS {
		t.Fatalf("one row of ten set aside: %v, %v; want SUCCESS", st, err)
	}
	fp := retry.Fingerprint(errors.New("row 14: no account 1014"))
	list, err := c.Tasks().ListQuarantined(ctx, &pb.ListQuarantinedRequest{Fingerprint: fp})
	if err != nil || len(list.GetItems()) != 1 || string(list.GetItems()[0].GetItem()) != `{"row":7}` {
		t.Fatalf("listed by fingerprint %s: %v %v", fp, list, err)
	}
	rep, err := c.Tasks().ReplayQuarantined(ctx, &pb.ReplayQuarantinedRequest{Ids: []int64{list.GetItems()[0].GetId()}})
	if err != nil || len(rep.GetTasks()) != 1 {
		t.Fatalf("replay: %v %v", rep, err)
	}
	if got, err := c.Get(ctx, rep.GetTasks()[0].GetId()); err != nil || got.GetKind() != "import.row" || string(got.GetArgs()) != `{"row":7}` {
		t.Errorf("the replayed task: %v %v", got, err)
	}

	st, err = work(t, c, "import", []int{7, 14, 21}, &pb.QuarantinePolicy{Max: 1})
	if !errors.Is(err, client.ErrTooManyQuarantined) || !errors.Is(err, retry.ErrPermanent) || st != pb.TaskState_TASK_STATE_FAILED {
		t.Errorf("two rows past a max of 1: %v, %v; want ErrTooManyQuarantined, permanent, FAILED", st, err)
	}
	st, err = work(t, c, "export", []int{1, 7}, &pb.QuarantinePolicy{MaxShare: 0.25})
	if err != nil || st != pb.TaskState_TASK_STATE_FAILED {
		t.Errorf("one row of two past a share of 0.25: %v, %v; want FAILED", st, err)
	}

	if err := client.Quarantine(ctx, 1, errors.New("bad")); !errors.Is(err, client.ErrNoAttempt) {
		t.Errorf("Quarantine without an attempt: %v", err)
	}
	if err := client.Saw(ctx, 1); !errors.Is(err, client.ErrNoAttempt) {
		t.Errorf("Saw without an attempt: %v", err)
	}
}
