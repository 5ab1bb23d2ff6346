package server_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// countingStore counts the store calls a report makes; the rest of the
// SQLite store's methods, its optional capabilities too, are its own.
type countingStore struct {
	*sqlite.Store
	finishes, lists, gets atomic.Int64
}

func (c *countingStore) Finish(ctx context.Context, fs []store.Finish) ([]error, error) {
	c.finishes.Add(1)
	return c.Store.Finish(ctx, fs)
}

func (c *countingStore) ListTasks(ctx context.Context, f task.Filter) ([]task.Task, error) {
	c.lists.Add(1)
	return c.Store.ListTasks(ctx, f)
}

func (c *countingStore) GetTask(ctx context.Context, id int64) (task.Task, error) {
	c.gets.Add(1)
	return c.Store.GetTask(ctx, id)
}

// claimN claims n tasks of kind for worker.
func (h *harness) claimN(t *testing.T, worker, kind string, n int) []*pb.Task {
	t.Helper()
	r, err := h.workers.Claim(ctx(t), &pb.ClaimRequest{WorkerId: worker, Kinds: []string{kind}, Limit: int64(n)})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GetTasks()) != n {
		t.Fatalf("claimed %d tasks, want %d", len(r.GetTasks()), n)
	}
	return r.GetTasks()
}

func complete(c *pb.Task) *pb.Result {
	return &pb.Result{TaskId: c.GetId(), LeaseToken: c.GetLeaseToken(), End: &pb.Result_Complete{Complete: &pb.Completed{Output: "done"}}}
}

// TestReportMixed: one Report of a complete, a failure, a snooze, a
// result under another task's token, one for no task, a bad one, and
// two repeats (of a result recorded by an earlier call, and of one in
// the same report): each is answered alone, in order, as the single call
// would answer it, and the accepted ones are recorded by one Finish of
// the store, with the tasks read in one call.
func TestReportMixed(t *testing.T) {
	t.Parallel()
	var cs *countingStore
	h := startOn(t, server.Config{}, "", func(st store.Store) store.Store {
		cs = &countingStore{Store: st.(*sqlite.Store)}
		return cs
	})
	for range 5 {
		h.enqueue(t, &pb.NewTask{Kind: "k"})
	}
	c := h.claimN(t, "w1", "k", 5)
	if _, err := h.workers.Complete(ctx(t), &pb.CompleteRequest{WorkerId: "w1", TaskId: c[4].GetId(), LeaseToken: c[4].GetLeaseToken()}); err != nil {
		t.Fatal(err)
	}
	other := &pb.Result{TaskId: c[3].GetId(), LeaseToken: c[0].GetLeaseToken(), End: &pb.Result_Complete{Complete: &pb.Completed{}}}
	none := &pb.Result{TaskId: 1 << 40, LeaseToken: 1, End: &pb.Result_Complete{Complete: &pb.Completed{}}}
	bad := &pb.Result{TaskId: c[2].GetId(), LeaseToken: c[2].GetLeaseToken(), End: &pb.Result_Snooze{Snooze: &pb.Snoozed{Delay: dpb(-time.Second)}}}
	req := &pb.ReportRequest{WorkerId: "w1", Results: []*pb.Result{
		complete(c[0]),
		{TaskId: c[1].GetId(), LeaseToken: c[1].GetLeaseToken(), End: &pb.Result_Fail{Fail: &pb.Failed{ErrorClass: pb.ErrorClass_ERROR_CLASS_PERMANENT, Message: "no such user", Output: "out"}}},
		{TaskId: c[2].GetId(), LeaseToken: c[2].GetLeaseToken(), End: &pb.Result_Snooze{Snooze: &pb.Snoozed{Delay: dpb(time.Minute)}}},
		other, none, bad,
		complete(c[4]), // recorded by the Complete above
		complete(c[0]), // recorded by this report's first result
		{TaskId: c[3].GetId(), LeaseToken: c[3].GetLeaseToken()}, // no end
	}}
	finishes, lists := cs.finishes.Load(), cs.lists.Load()
	r, err := h.workers.Report(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if n := cs.finishes.Load() - finishes; n != 1 {
		t.Errorf("%d Finish calls for one report, want 1", n)
	}
	if n := cs.lists.Load() - lists; n != 1 {
		t.Errorf("%d ListTasks calls for one report, want 1", n)
	}
	a := r.GetAnswers()
	if len(a) != len(req.GetResults()) {
		t.Fatalf("%d answers to %d results", len(a), len(req.GetResults()))
	}
	for i, want := range []struct {
		state, decision string
		code            codes.Code
	}{
		{"SUCCESS", "", codes.OK}, {"FAILED", "permanent", codes.OK}, {"SENSING", "", codes.OK},
		{"", "", codes.FailedPrecondition}, {"", "", codes.NotFound}, {"", "", codes.InvalidArgument},
		{"SUCCESS", "", codes.OK}, {"SUCCESS", "", codes.OK}, {"", "", codes.InvalidArgument},
	} {
		got := a[i]
		state, decision := got.GetTask().GetState().Task(), got.GetDecision().Word()
		if code := codes.Code(got.GetStatus().GetCode()); code != want.code || string(state) != want.state || decision != want.decision {
			t.Errorf("answer %d: %v %q, decision %q; want %v %q, decision %q", i, code, state, decision, want.code, want.state, want.decision)
		}
		if want.code == codes.OK && (got.GetTask().GetId() != req.GetResults()[i].GetTaskId() || got.GetTask().GetArgs() != nil) {
			t.Errorf("answer %d: task %v, want task %d without args", i, got.GetTask(), req.GetResults()[i].GetTaskId())
		}
	}

	// The store holds what the answers say, the first complete once.
	for i, want := range []string{"SUCCESS", "FAILED", "SENSING", "RUNNING", "SUCCESS"} {
		if got := h.get(t, c[i].GetId()); string(got.GetState().Task()) != want {
			t.Errorf("task %d is %s, want %s", i, got.GetState(), want)
		}
	}
	if as := h.attempts(t, c[0].GetId()); len(as) != 1 || as[0].Outcome != task.OutcomeSuccess || as[0].Output != "done" {
		t.Errorf("first task's attempts %+v", as)
	}
	if as := h.attempts(t, c[1].GetId()); len(as) != 1 || as[0].Decision != "permanent" || as[0].Output != "out" || as[0].Error != "no such user" {
		t.Errorf("failed task's attempts %+v", as)
	}
	if got := h.get(t, c[2].GetId()); got.GetAttempt() != 0 || time.Until(got.GetNextAt().AsTime()) < 30*time.Second {
		t.Errorf("snoozed task %v: want its attempt refunded, due in a minute", got)
	}

	// A refused result's status is what the single call answers.
	for i, single := range []func() error{
		func() error {
			_, err := h.workers.Complete(ctx(t), &pb.CompleteRequest{WorkerId: "w1", TaskId: other.GetTaskId(), LeaseToken: other.GetLeaseToken()})
			return err
		},
		func() error {
			_, err := h.workers.Complete(ctx(t), &pb.CompleteRequest{WorkerId: "w1", TaskId: none.GetTaskId(), LeaseToken: none.GetLeaseToken()})
			return err
		},
		func() error {
			_, err := h.workers.Snooze(ctx(t), &pb.SnoozeRequest{WorkerId: "w1", TaskId: bad.GetTaskId(), LeaseToken: bad.GetLeaseToken(), Delay: bad.GetSnooze().GetDelay()})
			return err
		},
	} {
		want, got := status.Convert(single()), status.FromProto(a[3+i].GetStatus())
		if got.Code() != want.Code() || got.Message() != want.Message() {
			t.Errorf("answer %d: %v %q; the single call answers %v %q", 3+i, got.Code(), got.Message(), want.Code(), want.Message())
		}
	}
	if f, err := violation(status.FromProto(a[5].GetStatus()).Err()); err != nil || f != "delay" {
		t.Errorf("the bad snooze's violation: %q, %v; want delay", f, err)
	}
}

// TestReportAnswersAsGet: a recorded result's task in the answer is the
// task as the store then holds it (but its args and last error), though
// the server does not read it again.
func TestReportAnswersAsGet(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	for range 2 {
		h.enqueue(t, &pb.NewTask{Kind: "k", Args: []byte(`{"n":1}`)})
	}
	c := h.claimN(t, "w1", "k", 2)
	r, err := h.workers.Report(ctx(t), &pb.ReportRequest{WorkerId: "w1", Results: []*pb.Result{
		complete(c[0]),
		{TaskId: c[1].GetId(), LeaseToken: c[1].GetLeaseToken(), End: &pb.Result_Fail{Fail: &pb.Failed{ErrorClass: pb.ErrorClass_ERROR_CLASS_UNCLASSIFIED, Message: "boom"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range r.GetAnswers() {
		want := h.get(t, c[i].GetId())
		got := a.GetTask()
		if got.GetState() != want.GetState() || got.GetAttempt() != want.GetAttempt() || got.GetLeaseOwner() != "" ||
			got.GetLeaseExpires() != nil || got.GetFingerprint() != want.GetFingerprint() || got.GetStreak() != want.GetStreak() ||
			!got.GetNextAt().AsTime().Equal(want.GetNextAt().AsTime()) || got.GetPrevDelay().AsDuration() != want.GetPrevDelay().AsDuration() {
			t.Errorf("answer %d: %v; Get: %v", i, got, want)
		}
		if d := want.GetFinishedAt().AsTime().Sub(got.GetFinishedAt().AsTime()); (want.GetFinishedAt() == nil) != (got.GetFinishedAt() == nil) || d < 0 || d > 10*time.Second {
			t.Errorf("answer %d finished at %v; Get: %v", i, got.GetFinishedAt(), want.GetFinishedAt())
		}
	}
}

// TestReportRefusedWhole: what spoils every result refuses the call and
// records nothing.
func TestReportRefusedWhole(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{MaxBatch: 2, Tokens: operators(testToken)}, testToken)
	for range 3 {
		h.enqueue(t, &pb.NewTask{Kind: "k"})
	}
	c := h.claimN(t, "w1", "k", 2)
	one := []*pb.Result{complete(c[0])}

	_, err := pb.NewWorkersServiceClient(dial(t, h.addr, "")).Report(ctx(t), &pb.ReportRequest{WorkerId: "w1", Results: one})
	wantCode(t, err, codes.Unauthenticated, "no token")
	_, err = h.workers.Report(ctx(t), &pb.ReportRequest{Results: one})
	wantCode(t, err, codes.InvalidArgument, "worker_id")
	_, err = h.workers.Report(ctx(t), &pb.ReportRequest{WorkerId: "w1"})
	wantCode(t, err, codes.InvalidArgument, "results", "at least one")
	_, err = h.workers.Report(ctx(t), &pb.ReportRequest{WorkerId: "w1", Results: []*pb.Result{complete(c[0]), complete(c[1]), complete(c[0])}})
	wantCode(t, err, codes.InvalidArgument, "results", "more than the limit of 2", "GRIT_MAX_BATCH")
	for _, x := range c {
		if got := h.get(t, x.GetId()); got.GetState() != pb.TaskState_TASK_STATE_RUNNING {
			t.Fatalf("task %d is %s after refused reports", x.GetId(), got.GetState())
		}
	}
}

// TestReportAnotherWorker: a result for a lease another worker holds is
// refused, and the rest of the report recorded.
func TestReportAnotherWorker(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	h.enqueue(t, &pb.NewTask{Kind: "a"})
	h.enqueue(t, &pb.NewTask{Kind: "b"})
	mine, theirs := h.claimOne(t, "w1", "a"), h.claimOne(t, "w2", "b")
	r, err := h.workers.Report(ctx(t), &pb.ReportRequest{WorkerId: "w1", Results: []*pb.Result{complete(theirs), complete(mine)}})
	if err != nil {
		t.Fatal(err)
	}
	a := r.GetAnswers()
	wantCode(t, status.FromProto(a[0].GetStatus()).Err(), codes.FailedPrecondition, `held by worker "w2", not "w1"`)
	if a[1].GetStatus() != nil || a[1].GetTask().GetState() != pb.TaskState_TASK_STATE_SUCCESS {
		t.Fatalf("my result: %v", a[1])
	}
	if got := h.get(t, theirs.GetId()); got.GetState() != pb.TaskState_TASK_STATE_RUNNING || got.GetLeaseOwner() != "w2" {
		t.Fatalf("their task %v", got)
	}
}
