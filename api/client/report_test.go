package client_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/grit-run/grit/api/client"
	pb "github.com/grit-run/grit/api/gritv1"
)

// TestSendResultCoalesces: the results many goroutines send go to the
// server in one Report, and each caller gets its own answer: recorded, or
// refused for its own stale lease while the rest are recorded.
func TestSendResultCoalesces(t *testing.T) {
	t.Parallel()
	const n = 20
	var reports, singles atomic.Int64
	addr, _ := serveWith(t, func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		switch req.(type) {
		case *pb.ReportRequest:
			reports.Add(1)
		case *pb.CompleteRequest, *pb.FailRequest:
			singles.Add(1)
		}
		return handler(ctx, req)
	})
	// The batch fills (n results and a stale one) long before its window
	// ends: it goes out as one report, whatever the scheduling.
	c, err := client.Dial(client.Config{Addr: addr, ReportBatchSize: n + 1, ReportInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for range n {
		if _, err := c.Enqueue(ctx, &pb.NewTask{Kind: "k"}); err != nil {
			t.Fatal(err)
		}
	}
	cl, err := c.Workers().Claim(ctx, &pb.ClaimRequest{WorkerId: "w1", Kinds: []string{"k"}, Limit: n})
	if err != nil || len(cl.GetTasks()) != n {
		t.Fatalf("claim: %d tasks, %v", len(cl.GetTasks()), err)
	}
	results := make([]*pb.Result, 0, n+1)
	for i, tk := range cl.GetTasks() {
		r := &pb.Result{TaskId: tk.GetId(), LeaseToken: tk.GetLeaseToken(), End: &pb.Result_Complete{Complete: &pb.Completed{}}}
		if i%2 == 1 {
			r.End = &pb.Result_Fail{Fail: &pb.Failed{ErrorClass: pb.ErrorClass_ERROR_CLASS_PERMANENT, Message: "no"}}
		}
		results = append(results, r)
	}
	first := cl.GetTasks()[0]
	results = append(results, &pb.Result{TaskId: first.GetId(), LeaseToken: first.GetLeaseToken() + 1000, End: &pb.Result_Complete{Complete: &pb.Completed{}}})

	got, errs := make([]client.Reported, len(results)), make([]error, len(results))
	var wg sync.WaitGroup
	for i, r := range results {
		wg.Go(func() { got[i], errs[i] = c.SendResult(ctx, "w1", r).Wait(ctx) })
	}
	wg.Wait()
	for i := range n {
		want, decision := pb.TaskState_TASK_STATE_SUCCESS, pb.Decision_DECISION_UNSPECIFIED
		if i%2 == 1 {
			want, decision = pb.TaskState_TASK_STATE_FAILED, pb.Decision_DECISION_PERMANENT
		}
		if errs[i] != nil || got[i].Task.GetState() != want || got[i].Decision != decision {
			t.Errorf("result %d: %v, %v, %v; want %v, %v", i, got[i].Task.GetState(), got[i].Decision, errs[i], want, decision)
		}
	}
	if code := client.Code(errs[n]); code != codes.FailedPrecondition {
		t.Errorf("the stale result: %v, want FAILED_PRECONDITION", errs[n])
	}
	if reports.Load() != 1 || singles.Load() != 0 {
		t.Errorf("%d Report calls and %d single calls for %d results, want one report", reports.Load(), singles.Load(), n+1)
	}
}
