package server_test

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
)

// TestEnqueueBounds: a timeout of 10,000 years, a grace of a day and a
// run_at in year 1 or 9999 are refused, INVALID_ARGUMENT naming the field
// and the range; nothing is written. The bounds themselves are accepted.
func TestEnqueueBounds(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	year := func(y int) *timestamppb.Timestamp {
		return timestamppb.New(time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC))
	}
	for _, c := range []struct {
		name string
		n    *pb.NewTask
		says []string
	}{
		{"timeout of 10,000 years", &pb.NewTask{Kind: "k", Timeout: &durationpb.Duration{Seconds: 10000 * 365 * 86400}}, []string{"task.timeout", "want 0s to 720h"}},
		{"grace of a day", &pb.NewTask{Kind: "k", Grace: dpb(24 * time.Hour)}, []string{"task.grace", "want 0s to 1h"}},
		{"run_at in year 1", &pb.NewTask{Kind: "k", RunAt: year(1)}, []string{"task.run_at", "0001-01-01", "more than 10 years from now"}},
		{"run_at in year 9999", &pb.NewTask{Kind: "k", RunAt: year(9999)}, []string{"task.run_at", "9999-01-01", "want a time from"}},
	} {
		_, err := h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: c.n})
		wantCode(t, err, codes.InvalidArgument, c.says...)
	}
	if n := h.count(t); n != 0 {
		t.Errorf("%d tasks written by refused requests", n)
	}
	ok := &pb.NewTask{Kind: "k", Timeout: dpb(30 * 24 * time.Hour), Grace: dpb(time.Hour), RunAt: timestamppb.New(time.Now().AddDate(9, 0, 0))}
	if _, err := h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: ok}); err != nil {
		t.Errorf("a task at the bounds: %v", err)
	}
}

// TestSnoozeBound: a worker cannot snooze a task for longer than the due
// window.
func TestSnoozeBound(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	h.enqueue(t, &pb.NewTask{Kind: "k"})
	c := h.claimOne(t, "w1", "k")
	_, err := h.workers.Snooze(ctx(t), &pb.SnoozeRequest{WorkerId: "w1", TaskId: c.GetId(), LeaseToken: c.GetLeaseToken(), Delay: dpb(20 * 365 * 24 * time.Hour)})
	wantCode(t, err, codes.InvalidArgument, "delay", "want 0s to")
}
