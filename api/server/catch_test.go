package server_test

import (
	"encoding/json"
	"testing"

	"google.golang.org/grpc/codes"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/internal/decide"
	"github.com/grit-run/grit/task"
)

// TestRemoteFailureIsCaught: a remote worker's permanent failure that
// names a catch kind enqueues its catch task once, as a Go handler's
// does; a bad catch kind is INVALID_ARGUMENT.
func TestRemoteFailureIsCaught(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	h.enqueue(t, &pb.NewTask{Kind: "charge", Args: []byte(`{"order":"o-7"}`)})
	c := h.claimOne(t, "w1", "charge")
	_, err := h.workers.Fail(ctx(t), &pb.FailRequest{WorkerId: "w1", TaskId: c.GetId(), LeaseToken: c.GetLeaseToken(),
		ErrorClass: pb.ErrorClass_ERROR_CLASS_PERMANENT, Message: "card declined", Catch: "refund order"})
	wantCode(t, err, codes.InvalidArgument, "catch")
	for range 2 { // a repeat whose answer was lost catches nothing more
		r, err := h.workers.Fail(ctx(t), &pb.FailRequest{WorkerId: "w1", TaskId: c.GetId(), LeaseToken: c.GetLeaseToken(),
			ErrorClass: pb.ErrorClass_ERROR_CLASS_PERMANENT, Message: "card declined", Catch: "refund"})
		if err != nil || r.GetTask().GetState() != pb.TaskState_TASK_STATE_FAILED {
			t.Fatalf("fail: %v %v", r, err)
		}
	}
	got, err := h.store.ListTasks(ctx(t), task.Filter{Kind: "refund"})
	if err != nil || len(got) != 1 {
		t.Fatalf("catch tasks %+v (%v), want one", got, err)
	}
	var caught task.Caught
	if err := json.Unmarshal(got[0].Args, &caught); err != nil || caught.Task != c.GetId() || caught.Kind != "charge" ||
		string(caught.Args) != `{"order":"o-7"}` || caught.Error == "" {
		t.Errorf("caught %+v (%v)", caught, err)
	}
	if got[0].IdempotencyKey != decide.CatchKey(c.GetId(), c.GetLeaseToken()) {
		t.Errorf("key %q", got[0].IdempotencyKey)
	}
}
