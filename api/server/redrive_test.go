package server_test

import (
	"slices"
	"testing"

	"google.golang.org/grpc/codes"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/task"
)

// TestRedrive: Redrive sends a failed run's unsuccessful tasks back to
// wait and answers the run, RUNNING; it is audited; a run still running
// is FAILED_PRECONDITION (WRONG_STATE, with the run's state), one not
// there NOT_FOUND (RUN_NOT_FOUND), and a run id below 1 INVALID_ARGUMENT.
func TestRedrive(t *testing.T) {
	h := start(t, server.Config{}, "")
	run, err := h.store.SubmitRun(ctx(t), task.NewRun{Name: "nightly", Tasks: []task.NewTask{
		{Name: "load", Kind: "load"}, {Name: "report", Kind: "report", Needs: []string{"load"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	c := h.claimOne(t, "w1", "load")
	if _, err := h.workers.Fail(ctx(t), &pb.FailRequest{TaskId: c.GetId(), WorkerId: "w1", LeaseToken: c.GetLeaseToken(),
		ErrorClass: pb.ErrorClass_ERROR_CLASS_PERMANENT, Message: "warehouse: table locked"}); err != nil {
		t.Fatal(err)
	}
	r, err := h.tasks.Redrive(ctx(t), &pb.RedriveRequest{RunId: run.ID})
	if err != nil {
		t.Fatal(err)
	}
	if r.GetRun().GetId() != run.ID || r.GetRun().GetState() != pb.TaskState_TASK_STATE_RUNNING || r.GetRun().GetName() != "nightly" ||
		r.GetRun().GetFinishedAt() != nil || len(r.GetTaskIds()) != 2 || !slices.Contains(r.GetTaskIds(), c.GetId()) {
		t.Errorf("redrive answered %v", r)
	}
	if again := h.claimOne(t, "w1", "load"); again.GetId() != c.GetId() || again.GetAttempt() != 1 {
		t.Errorf("claimed %v after the redrive, want task %d at attempt 1", again, c.GetId())
	}
	log, err := h.store.AuditLog(ctx(t), 0, 0)
	if err != nil || len(log) != 1 || log[0].Action != "redrive" || log[0].Target != "run 1" || log[0].Count != 2 || log[0].Who != "api" {
		t.Errorf("the audit log: %+v, %v; want the redrive of run 1 by the api", log, err)
	}

	_, err = h.tasks.Redrive(ctx(t), &pb.RedriveRequest{RunId: run.ID})
	wantCode(t, err, codes.FailedPrecondition, "redrive run 1: it is RUNNING: only a run that has ended can be redriven")
	wantInfo(t, err, codes.FailedPrecondition, pb.ReasonWrongState, map[string]string{"state": "RUNNING", "run_id": "1"})
	_, err = h.tasks.Redrive(ctx(t), &pb.RedriveRequest{RunId: 99})
	wantInfo(t, err, codes.NotFound, pb.ReasonRunNotFound, map[string]string{"run_id": "99"})
	_, err = h.tasks.Redrive(ctx(t), &pb.RedriveRequest{})
	wantCode(t, err, codes.InvalidArgument, "run_id")
}
