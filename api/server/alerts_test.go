package server_test

import (
	"testing"
	"time"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/task"
)

// TestRemoteDeadLetterAlerts: a remote worker's task dead-lettered
// alerts once, through the gate as a Go worker's does, after the store
// recorded it; the worker repeating its report (its answer lost) does
// not alert again.
func TestRemoteDeadLetterAlerts(t *testing.T) {
	t.Parallel()
	alerts := make(chan alert.Event, 10)
	h := start(t, server.Config{Alerting: alert.Alerting{OnAlert: func(ev alert.Event) { alerts <- ev }}}, "")
	tk := h.enqueue(t, &pb.NewTask{Kind: "parse", Group: "rows", Queue: "etl", Policy: "5 10ms"})
	c := h.claimOne(t, "w1", "parse")
	if _, err := h.workers.Fail(ctx(t), &pb.FailRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: c.GetLeaseToken(), ErrorClass: pb.ErrorClass_ERROR_CLASS_UNCLASSIFIED, Message: "parse row 1: unexpected token"}); err != nil {
		t.Fatal(err)
	}
	c = h.claimOne(t, "w1", "parse")
	last := &pb.FailRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: c.GetLeaseToken(), ErrorClass: pb.ErrorClass_ERROR_CLASS_UNCLASSIFIED, Message: "parse row 2: unexpected token"}
	if _, err := h.workers.Fail(ctx(t), last); err != nil {
		t.Fatal(err)
	}
	if _, err := h.workers.Fail(ctx(t), last); err != nil {
		t.Fatalf("the same report again: %v", err)
	}
	var ev alert.Event
	select {
	case ev = <-alerts:
	case <-time.After(10 * time.Second):
		t.Fatalf("no alert; task %v", h.get(t, tk.GetId()))
	}
	got := h.get(t, tk.GetId())
	if got.GetState().Task() != task.DeadLetter {
		t.Fatalf("task %v", got)
	}
	if ev.Type != alert.DeadLetter || ev.TaskID != tk.GetId() || ev.Kind != "parse" || ev.Queue != "etl" || ev.Group != "rows" ||
		ev.Attempt != 2 || ev.Fingerprint != got.GetFingerprint() || ev.Error != "parse row 2: unexpected token" {
		t.Errorf("alert %+v", ev)
	}
	h.server.DrainAlerts(t.Context())
	select {
	case ev := <-alerts:
		t.Errorf("a second alert %+v", ev)
	default:
	}
}
