package server_test

import (
	"testing"

	"google.golang.org/grpc/codes"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/task"
)

// TestExecNeedsTheTokensRight: a token without the right exec cannot
// enqueue a process task, alone or in a batch (PERMISSION_DENIED, reason
// TOKEN_NO_EXEC, saying how to give it), and writes nothing; it may
// enqueue other kinds. A token with the right may, and the task records
// that it came from the API.
func TestExecNeedsTheTokensRight(t *testing.T) {
	t.Parallel()
	const plain, execToken = "plain-token-0123456789", "exec-token-0123456789"
	h := start(t, server.Config{Tokens: []server.Token{{Value: plain}, {Value: execToken, Exec: true}}}, plain)
	execTask := &pb.NewTask{Kind: task.KindExec, Args: []byte(`{"shell":"id"}`)}
	_, err := h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: execTask})
	wantCode(t, err, codes.PermissionDenied, "lacks the right exec", "TOKEN operator exec")
	wantInfo(t, err, codes.PermissionDenied, pb.ReasonTokenNoExec, map[string]string{"right": "exec", "kind": task.KindExec})
	_, err = h.tasks.EnqueueBatch(ctx(t), &pb.EnqueueBatchRequest{Tasks: []*pb.NewTask{{Kind: "email.send"}, execTask}})
	wantCode(t, err, codes.PermissionDenied, "task 1 is a process task")
	if n := h.count(t); n != 0 {
		t.Fatalf("%d tasks written by refused requests", n)
	}
	h.enqueue(t, &pb.NewTask{Kind: "email.send"})

	withExec := pb.NewTasksServiceClient(dial(t, h.addr, execToken))
	got, err := withExec.Enqueue(ctx(t), &pb.EnqueueRequest{Task: execTask})
	if err != nil {
		t.Fatalf("a token with the right exec: %v", err)
	}
	stored, err := h.store.GetTask(ctx(t), got.GetTask().GetId())
	if err != nil {
		t.Fatal(err)
	}
	if stored.Origin != task.OriginAPI {
		t.Errorf("a task enqueued through the API has origin %q, want %q", stored.Origin, task.OriginAPI)
	}
}

// TestCatchCannotBeExec: a remote worker cannot name a process task as its
// failure's catch.
func TestCatchCannotBeExec(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	h.enqueue(t, &pb.NewTask{Kind: "k"})
	c := h.claimOne(t, "w1", "k")
	_, err := h.workers.Fail(ctx(t), &pb.FailRequest{WorkerId: "w1", TaskId: c.GetId(), LeaseToken: c.GetLeaseToken(),
		ErrorClass: pb.ErrorClass_ERROR_CLASS_PERMANENT, Message: "boom", Catch: task.KindExec})
	wantCode(t, err, codes.InvalidArgument, "catch", "process task")
}
