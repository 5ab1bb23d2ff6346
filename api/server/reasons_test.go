package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// wantInfo checks that err has code and an ErrorInfo of domain grit with
// reason and at least the metadata meta, decoded from the status's
// details as a client in any language would; it returns the ErrorInfo.
func wantInfo(t *testing.T, err error, code codes.Code, reason string, meta map[string]string) *errdetails.ErrorInfo {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("got %v, want code %v", err, code)
	}
	var info *errdetails.ErrorInfo
	for _, d := range status.Convert(err).Details() {
		if i, ok := d.(*errdetails.ErrorInfo); ok {
			info = i
		}
	}
	if info == nil {
		t.Fatalf("%v: no ErrorInfo detail", err)
	}
	if info.GetDomain() != "grit" || info.GetReason() != reason {
		t.Errorf("%v: ErrorInfo is %s/%s, want grit/%s", err, info.GetDomain(), info.GetReason(), reason)
	}
	for k, v := range meta {
		if got, ok := info.GetMetadata()[k]; !ok || got != v {
			t.Errorf("%v: metadata %s = %q, want %q (all: %v)", err, k, got, v, info.GetMetadata())
		}
	}
	return info
}

// raw sends an authorization header as it is.
type raw string

func (r raw) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": string(r)}, nil
}
func (r raw) RequireTransportSecurity() bool { return false }

// TestReasonsOfRequests: each error a request's own content or its
// caller's token earns carries its reason.
func TestReasonsOfRequests(t *testing.T) {
	t.Parallel()
	const reader = "reader-token-0123456789abcdef"
	h := start(t, server.Config{MaxBatch: 2, MaxPayload: 1 << 10,
		Tokens: []server.Token{{Value: testToken}, {Value: reader, Role: server.RoleReadOnly}}}, testToken)

	_, err := h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: &pb.NewTask{}})
	info := wantInfo(t, err, codes.InvalidArgument, pb.ReasonInvalidArgument, nil)
	if f, verr := violation(err); verr != nil || f == "" || info.GetMetadata()["field"] != f {
		t.Errorf("field %q (%v) in the BadRequest, %q in the ErrorInfo; want the same", f, verr, info.GetMetadata()["field"])
	}

	_, err = h.tasks.EnqueueBatch(ctx(t), &pb.EnqueueBatchRequest{Tasks: []*pb.NewTask{{Kind: "k"}, {Kind: "k"}, {Kind: "k"}}})
	wantInfo(t, err, codes.InvalidArgument, pb.ReasonBatchTooLarge, map[string]string{"field": "tasks"})

	args := fmt.Sprintf(`{"s":%q}`, strings.Repeat("x", 2<<10))
	_, err = h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: &pb.NewTask{Kind: "k", Args: []byte(args)}})
	wantInfo(t, err, codes.InvalidArgument, pb.ReasonPayloadTooLarge, map[string]string{"field": "task.args"})

	for reason, creds := range map[string]raw{
		pb.ReasonTokenMissing:   "",
		pb.ReasonTokenMalformed: "Basic dXNlcjpwYXNz",
		pb.ReasonTokenUnknown:   "Bearer not-a-token-of-this-server",
	} {
		c := pb.NewTasksServiceClient(dial(t, h.addr, ""))
		if creds != "" {
			c = pb.NewTasksServiceClient(dial(t, h.addr, "", grpcCreds(creds)...))
		}
		_, err := c.Get(ctx(t), &pb.GetRequest{Id: 1})
		wantInfo(t, err, codes.Unauthenticated, reason, map[string]string{"method": pb.TasksService_Get_FullMethodName})
	}
	ro := pb.NewTasksServiceClient(dial(t, h.addr, reader))
	_, err = ro.Cancel(ctx(t), &pb.CancelRequest{Id: 1})
	wantInfo(t, err, codes.PermissionDenied, pb.ReasonTokenReadOnly, map[string]string{"method": pb.TasksService_Cancel_FullMethodName})
}

// TestReasonServerBusy: a call past --max-in-flight, refused in the tap
// before its message is read, still carries its reason.
func TestReasonServerBusy(t *testing.T) {
	t.Parallel()
	held := &heldEnqueues{entered: make(chan struct{}, 1), release: make(chan struct{})}
	h := startOn(t, server.Config{MaxInFlight: 1}, "", func(st store.Store) store.Store {
		held.Store = st.(*sqlite.Store)
		return held
	})
	done := make(chan error, 1)
	go func() {
		_, err := h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: &pb.NewTask{Kind: "k"}})
		done <- err
	}()
	<-held.entered
	_, err := h.tasks.Get(ctx(t), &pb.GetRequest{Id: 1})
	close(held.release)
	wantInfo(t, err, codes.ResourceExhausted, pb.ReasonServerBusy, map[string]string{"max_in_flight": "1", "method": pb.TasksService_Get_FullMethodName})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestReasonsOfTasks: what a worker or an operator is told when the task
// is not as their request needs: lease lost, another worker's lease,
// wrong state, not found; each with the task and what it is now.
func TestReasonsOfTasks(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	id := h.enqueue(t, &pb.NewTask{Kind: "k"}).GetId()
	c := h.claimOne(t, "w1", "k")
	sid, tok := fmt.Sprint(id), fmt.Sprint(c.GetLeaseToken())

	_, err := h.workers.Complete(ctx(t), &pb.CompleteRequest{WorkerId: "w2", TaskId: id, LeaseToken: c.GetLeaseToken()})
	wantInfo(t, err, codes.FailedPrecondition, pb.ReasonLeaseHeldByOther,
		map[string]string{"task_id": sid, "lease_token": tok, "holder": "w1", "state": "RUNNING"})
	_, err = h.workers.RecordStep(ctx(t), &pb.RecordStepRequest{WorkerId: "w2", TaskId: id, LeaseToken: c.GetLeaseToken(),
		Step: &pb.Step{Seq: 1, Name: "s", Result: []byte(`1`)}})
	wantInfo(t, err, codes.FailedPrecondition, pb.ReasonLeaseHeldByOther, map[string]string{"task_id": sid, "holder": "w1"})

	_, err = h.tasks.DeadLetter(ctx(t), &pb.DeadLetterRequest{Id: id, Action: pb.DeadLetterAction_DEAD_LETTER_ACTION_REPLAY})
	wantInfo(t, err, codes.FailedPrecondition, pb.ReasonWrongState, map[string]string{"task_id": sid, "state": "RUNNING"})

	if _, err := h.tasks.Cancel(ctx(t), &pb.CancelRequest{Id: id}); err != nil {
		t.Fatal(err)
	}
	_, err = h.workers.Complete(ctx(t), &pb.CompleteRequest{WorkerId: "w1", TaskId: id, LeaseToken: c.GetLeaseToken()})
	wantInfo(t, err, codes.FailedPrecondition, pb.ReasonLeaseLost, map[string]string{"task_id": sid, "lease_token": tok, "state": "CANCELLED"})
	_, err = h.workers.RecordStep(ctx(t), &pb.RecordStepRequest{WorkerId: "w1", TaskId: id, LeaseToken: c.GetLeaseToken(),
		Step: &pb.Step{Seq: 1, Name: "s", Result: []byte(`1`)}})
	wantInfo(t, err, codes.FailedPrecondition, pb.ReasonLeaseLost, map[string]string{"task_id": sid, "state": "CANCELLED"})
	r, err := h.workers.Report(ctx(t), &pb.ReportRequest{WorkerId: "w1", Results: []*pb.Result{
		{TaskId: id, LeaseToken: c.GetLeaseToken(), End: &pb.Result_Complete{Complete: &pb.Completed{}}},
		{TaskId: 4242, LeaseToken: 1, End: &pb.Result_Complete{Complete: &pb.Completed{}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	wantInfo(t, status.FromProto(r.GetAnswers()[0].GetStatus()).Err(), codes.FailedPrecondition, pb.ReasonLeaseLost, map[string]string{"task_id": sid})
	wantInfo(t, status.FromProto(r.GetAnswers()[1].GetStatus()).Err(), codes.NotFound, pb.ReasonTaskNotFound, map[string]string{"task_id": "4242"})

	_, err = h.tasks.Get(ctx(t), &pb.GetRequest{Id: 4242})
	wantInfo(t, err, codes.NotFound, pb.ReasonTaskNotFound, map[string]string{"task_id": "4242"})
	_, err = h.tasks.Attempts(ctx(t), &pb.AttemptsRequest{TaskId: 4242})
	wantInfo(t, err, codes.NotFound, pb.ReasonTaskNotFound, map[string]string{"task_id": "4242"})
	_, err = h.tasks.Instance(ctx(t), &pb.InstanceRequest{Machine: "order", Key: "order-1042"})
	wantInfo(t, err, codes.NotFound, pb.ReasonInstanceNotFound, map[string]string{"machine": "order", "key": "order-1042"})

	_, err = h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: &pb.NewTask{Kind: "k", IdempotencyKey: "once"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: &pb.NewTask{Kind: "other", IdempotencyKey: "once"}})
	wantInfo(t, err, codes.AlreadyExists, pb.ReasonIdempotencyKeyConflict, map[string]string{"key": "once", "differs": "kind"})
}

// failingGets is a store whose GetTask fails with err, or panics when err
// is nil.
type failingGets struct {
	*sqlite.Store
	err error
}

func (s *failingGets) GetTask(context.Context, int64) (task.Task, error) {
	if s.err == nil {
		panic("a bug in the store")
	}
	return task.Task{}, s.err
}

// TestReasonsOfTheServer: what a client is told when the server or its
// store fails rather than the request.
func TestReasonsOfTheServer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err    error
		code   codes.Code
		reason string
	}{
		{fmt.Errorf("get task: %w", syscall.ECONNREFUSED), codes.Unavailable, pb.ReasonStoreUnavailable},
		{fmt.Errorf("get task: %w", context.DeadlineExceeded), codes.DeadlineExceeded, pb.ReasonDeadlineExceeded},
		{fmt.Errorf("get task: %w", context.Canceled), codes.Canceled, pb.ReasonCancelled},
		{errors.New("get task: disk on fire"), codes.Internal, pb.ReasonInternal},
		{nil, codes.Internal, pb.ReasonInternal}, // a panic
	} {
		h := startOn(t, server.Config{}, "", func(st store.Store) store.Store {
			return &failingGets{Store: st.(*sqlite.Store), err: c.err}
		})
		_, err := h.tasks.Get(ctx(t), &pb.GetRequest{Id: 7})
		wantInfo(t, err, c.code, c.reason, nil)
	}

	st, err := sqlite.Open(t.Context(), "sqlite:"+t.TempDir()+"/grit.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := startOn(t, server.Config{}, "", func(store.Store) store.Store {
		return struct{ store.Store }{st} // the required capabilities and none of the optional ones
	})
	_, err = h.tasks.Pauses(ctx(t), &pb.PausesRequest{})
	wantInfo(t, err, codes.Unimplemented, pb.ReasonStoreUnsupported, map[string]string{"feature": "pauses"})
}

func grpcCreds(r raw) []grpc.DialOption {
	return []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(r)}
}
