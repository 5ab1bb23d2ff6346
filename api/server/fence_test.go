package server_test

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/task"
)

// running checks that a report that was refused changed nothing: the
// task is still RUNNING under c's lease, its attempt still open.
func (h *harness) running(t *testing.T, c *pb.Task) {
	t.Helper()
	g := h.get(t, c.GetId())
	if g.GetState() != pb.TaskState_TASK_STATE_RUNNING || g.GetLeaseToken() != c.GetLeaseToken() || g.GetLeaseOwner() != c.GetLeaseOwner() || g.GetAttempt() != 1 {
		t.Fatalf("a refused report changed the task: %v", g)
	}
	if as := h.attempts(t, c.GetId()); len(as) != 1 || as[0].Outcome != task.OutcomeRunning {
		t.Fatalf("a refused report changed the attempt: %+v", as)
	}
}

// TestCrossTaskToken: a worker that reports on another worker's task with
// its own token is refused, whether it names itself or not, and the
// other worker's task is untouched.
func TestCrossTaskToken(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	h.enqueue(t, &pb.NewTask{Kind: "k"})
	h.enqueue(t, &pb.NewTask{Kind: "k"})
	a := h.claimOne(t, "w1", "k")
	b := h.claimOne(t, "w2", "k")
	if a.GetLeaseToken() == b.GetLeaseToken() {
		t.Errorf("tasks %d and %d both hold lease token %d", a.GetId(), b.GetId(), a.GetLeaseToken())
	}
	for _, w := range []string{"w1"} {
		_, err := h.workers.Complete(ctx(t), &pb.CompleteRequest{WorkerId: w, TaskId: b.GetId(), LeaseToken: a.GetLeaseToken()})
		wantCode(t, err, codes.FailedPrecondition, "not recorded")
		_, err = h.workers.Fail(ctx(t), &pb.FailRequest{WorkerId: w, TaskId: b.GetId(), LeaseToken: a.GetLeaseToken(), ErrorClass: pb.ErrorClass_ERROR_CLASS_PERMANENT})
		wantCode(t, err, codes.FailedPrecondition, "not recorded")
		_, err = h.workers.Snooze(ctx(t), &pb.SnoozeRequest{WorkerId: w, TaskId: b.GetId(), LeaseToken: a.GetLeaseToken(), Delay: dpb(time.Minute)})
		wantCode(t, err, codes.FailedPrecondition, "not recorded")
	}
	h.running(t, a)
	h.running(t, b)
}

// TestForeignWorker: a worker that names a lease another worker holds, its
// token right, is refused: its result, its snooze, its heartbeat and its
// release.
func TestForeignWorker(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	h.enqueue(t, &pb.NewTask{Kind: "k"})
	c := h.claimOne(t, "w1", "k")
	_, err := h.workers.Complete(ctx(t), &pb.CompleteRequest{WorkerId: "w3", TaskId: c.GetId(), LeaseToken: c.GetLeaseToken()})
	wantCode(t, err, codes.FailedPrecondition, `held by worker "w1"`, `not "w3"`)
	_, err = h.workers.Fail(ctx(t), &pb.FailRequest{WorkerId: "w3", TaskId: c.GetId(), LeaseToken: c.GetLeaseToken(), ErrorClass: pb.ErrorClass_ERROR_CLASS_PERMANENT})
	wantCode(t, err, codes.FailedPrecondition, `held by worker "w1"`)
	_, err = h.workers.Snooze(ctx(t), &pb.SnoozeRequest{WorkerId: "w3", TaskId: c.GetId(), LeaseToken: c.GetLeaseToken(), Delay: dpb(time.Minute)})
	wantCode(t, err, codes.FailedPrecondition, `held by worker "w1"`)
	hb, err := h.workers.Heartbeat(ctx(t), &pb.HeartbeatRequest{WorkerId: "w3", Leases: []*pb.Lease{{TaskId: c.GetId(), LeaseToken: c.GetLeaseToken()}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(hb.GetLost()) != 1 {
		t.Errorf("w3 renewed w1's lease: lost %v, want task %d's", hb.GetLost(), c.GetId())
	}
	r, err := h.workers.Release(ctx(t), &pb.ReleaseRequest{WorkerId: "w3", Leases: []*pb.Lease{{TaskId: c.GetId(), LeaseToken: c.GetLeaseToken()}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GetLost()) != 1 || r.GetLost()[0].GetTaskId() != c.GetId() {
		t.Errorf("w3 released w1's task: lost %v, want task %d's", r.GetLost(), c.GetId())
	}
	h.running(t, c)

	// The holder itself is heard.
	if _, err := h.workers.Complete(ctx(t), &pb.CompleteRequest{WorkerId: "w1", TaskId: c.GetId(), LeaseToken: c.GetLeaseToken()}); err != nil {
		t.Fatal(err)
	}
}
