package server_test

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
)

// TestRemoteSteps: a remote worker records its task's steps under its
// lease, reads them back on a later attempt, and is refused without the
// lease, over the payload limit, or with a result that is not JSON.
func TestRemoteSteps(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{MaxPayload: 1024}, "")
	h.enqueue(t, &pb.NewTask{Kind: "pay"})
	c := h.claimOne(t, "w1", "pay")
	rec := func(worker string, token int64, seq int32, name, result string) (*pb.RecordStepResponse, error) {
		return h.workers.RecordStep(ctx(t), &pb.RecordStepRequest{WorkerId: worker, TaskId: c.GetId(), LeaseToken: token,
			Step: &pb.Step{Seq: seq, Name: name, Occurrence: 1, Attempt: 1, Result: []byte(result)}})
	}
	got, err := rec("w1", c.GetLeaseToken(), 1, "charge", `{"id":"ch-1"}`)
	if err != nil || got.GetStep().GetName() != "charge" || got.GetStep().GetRecordedAt() == nil {
		t.Fatalf("record: %v %v", got, err)
	}
	again, err := rec("w1", c.GetLeaseToken(), 1, "other", `1`)
	if err != nil || again.GetStep().GetName() != "charge" {
		t.Errorf("the place again: %v %v, want the first record", again, err)
	}
	_, err = rec("w2", c.GetLeaseToken(), 2, "x", `1`)
	wantCode(t, err, codes.FailedPrecondition, "not recorded")
	_, err = rec("w1", c.GetLeaseToken()+99, 2, "x", `1`)
	wantCode(t, err, codes.FailedPrecondition, "not recorded")
	_, err = rec("w1", c.GetLeaseToken(), 2, "big", `"`+strings.Repeat("x", 2000)+`"`)
	wantCode(t, err, codes.InvalidArgument, "record a reference")
	_, err = rec("w1", c.GetLeaseToken(), 2, "bad", `{`)
	wantCode(t, err, codes.InvalidArgument, "result")
	_, err = h.workers.RecordStep(ctx(t), &pb.RecordStepRequest{WorkerId: "w1", TaskId: c.GetId(), LeaseToken: c.GetLeaseToken()})
	wantCode(t, err, codes.InvalidArgument, "step")

	ss, err := h.workers.Steps(ctx(t), &pb.StepsRequest{TaskId: c.GetId()})
	if err != nil || len(ss.GetSteps()) != 1 || string(ss.GetSteps()[0].GetResult()) != `{"id":"ch-1"}` {
		t.Errorf("steps: %v %v", ss, err)
	}
	h.running(t, c)
}
