package server_test

import (
	"testing"

	"google.golang.org/grpc/codes"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestSendToTask: a message sent through the API is kept for its task
// and written to the audit log, as grit send's; a missing task, one that
// ended and a bad topic or payload are refused, saying so.
func TestSendToTask(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	for _, kind := range []string{"refund", "done"} {
		if _, err := h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: &pb.NewTask{Kind: kind}}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := h.tasks.SendToTask(ctx(t), &pb.SendToTaskRequest{TaskId: 1, Topic: "approval", Payload: []byte(`{"by":"ana"}`)})
	if err != nil || got.GetMessage().GetId() == 0 || got.GetMessage().GetTaskId() != 1 || got.GetMessage().GetSentAt() == nil {
		t.Fatalf("send: %v (%v), want the message kept", got, err)
	}
	kept, err := h.store.Messages(ctx(t), 1)
	if err != nil || len(kept) != 1 || string(kept[0].Payload) != `{"by":"ana"}` || kept[0].Topic != "approval" {
		t.Errorf("kept %+v (%v), want the one sent", kept, err)
	}
	log, err := h.store.AuditLog(ctx(t), 0, 0)
	want := store.SentAudit(kept[0])
	if err != nil || len(log) != 1 || log[0].Action != want.Action || log[0].Target != want.Target || log[0].Detail != want.Detail || log[0].Who == "" {
		t.Errorf("audit log %+v (%v), want %+v by the caller", log, err, want)
	}
	c, err := h.store.Claim(ctx(t), store.ClaimRequest{Worker: "w", Kinds: []string{"done"}, Limit: 1})
	if err != nil || len(c) != 1 {
		t.Fatal(c, err)
	}
	if _, err := h.store.Finish(ctx(t), []store.Finish{{TaskID: c[0].ID, Token: c[0].LeaseToken, State: task.Success}}); err != nil {
		t.Fatal(err)
	}
	_, err = h.tasks.SendToTask(ctx(t), &pb.SendToTaskRequest{TaskId: 2, Topic: "approval", Payload: []byte(`1`)})
	wantCode(t, err, codes.FailedPrecondition, "SUCCESS")
	_, err = h.tasks.SendToTask(ctx(t), &pb.SendToTaskRequest{TaskId: 42, Topic: "approval", Payload: []byte(`1`)})
	wantCode(t, err, codes.NotFound, "42")
	_, err = h.tasks.SendToTask(ctx(t), &pb.SendToTaskRequest{TaskId: 1, Topic: "", Payload: []byte(`1`)})
	wantCode(t, err, codes.InvalidArgument, "topic")
	_, err = h.tasks.SendToTask(ctx(t), &pb.SendToTaskRequest{TaskId: 1, Topic: "approval", Payload: []byte(`{`)})
	wantCode(t, err, codes.InvalidArgument, "payload")
	_, err = h.tasks.SendToTask(ctx(t), &pb.SendToTaskRequest{Topic: "approval", Payload: []byte(`1`)})
	wantCode(t, err, codes.InvalidArgument, "task_id")
}
