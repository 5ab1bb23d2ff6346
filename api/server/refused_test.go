package server_test

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/store/sqlite/sqlitetest"
)

// TestReportARefusedResult: on both stores, whose database refuses the
// successes of one kind, one Report of a remote worker's 31 results (30
// of other kinds, one refused) records the 30 and answers the refused
// one alone, with its own RESULT_REFUSED status naming its task; nothing
// of it is recorded and its lease is still the worker's, whose decision
// it is: a failure it reports then is recorded.
func TestReportARefusedResult(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(t *testing.T) (store.Store, func(kind, msg string)){
		"SQLite": func(t *testing.T) (store.Store, func(kind, msg string)) {
			path := sqlitetest.Path(t)
			st, err := sqlite.Open(t.Context(), "sqlite:"+path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st, func(kind, msg string) { sqlitetest.Refuse(t, path, kind, msg) }
		},
		"PostgreSQL": func(t *testing.T) (store.Store, func(kind, msg string)) {
			schema := pgtest.NewSchema(t)
			return pgtest.OpenIn(t, schema), func(kind, msg string) { pgtest.Refuse(t, schema, kind, msg) }
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, refuse := open(t)
			testReportRefused(t, serve(t, server.Config{Store: st}, ""), refuse)
		})
	}
}

func testReportRefused(t *testing.T, h *harness, refuse func(kind, msg string)) {
	h.enqueue(t, &pb.NewTask{Kind: "charge"})
	for _, kind := range []string{"mail", "thumb", "index"} {
		for range 10 {
			h.enqueue(t, &pb.NewTask{Kind: kind})
		}
	}
	refuse("charge", "ledger closed")
	r, err := h.workers.Claim(ctx(t), &pb.ClaimRequest{WorkerId: "w1", Kinds: []string{"charge", "mail", "thumb", "index"}, Limit: 40})
	if err != nil || len(r.GetTasks()) != 31 {
		t.Fatalf("claimed %d tasks (%v), want 31", len(r.GetTasks()), err)
	}
	rs := make([]*pb.Result, len(r.GetTasks()))
	var charge *pb.Task
	for i, c := range r.GetTasks() {
		rs[i] = complete(c)
		if c.GetKind() == "charge" {
			charge = c
		}
	}
	rep, err := h.workers.Report(ctx(t), &pb.ReportRequest{WorkerId: "w1", Results: rs})
	if err != nil {
		t.Fatalf("the report failed as a whole: %v", err)
	}
	for i, a := range rep.GetAnswers() {
		c := r.GetTasks()[i]
		if c.GetId() == charge.GetId() {
			checkRefusedAnswer(t, a, c.GetId())
			continue
		}
		if a.GetStatus() != nil || a.GetTask().GetState() != pb.TaskState_TASK_STATE_SUCCESS {
			t.Errorf("task %d (%s): %v, want SUCCESS", c.GetId(), c.GetKind(), a)
		}
	}
	if got := h.get(t, charge.GetId()); got.GetState() != pb.TaskState_TASK_STATE_RUNNING || got.GetLeaseOwner() != "w1" {
		t.Fatalf("the refused task is %s held by %q, want RUNNING, still w1's", got.GetState(), got.GetLeaseOwner())
	}
	// The worker decides: it fails the task, which the store takes.
	fail := &pb.Result{TaskId: charge.GetId(), LeaseToken: charge.GetLeaseToken(),
		End: &pb.Result_Fail{Fail: &pb.Failed{ErrorClass: pb.ErrorClass_ERROR_CLASS_PERMANENT, Message: "could not record: ledger closed"}}}
	rep, err = h.workers.Report(ctx(t), &pb.ReportRequest{WorkerId: "w1", Results: []*pb.Result{fail}})
	if err != nil || rep.GetAnswers()[0].GetStatus() != nil || rep.GetAnswers()[0].GetTask().GetState() != pb.TaskState_TASK_STATE_FAILED {
		t.Fatalf("report the refused task's failure: %v, %v; want FAILED", rep, err)
	}
}

// checkRefusedAnswer checks that a is task id's own refusal.
func checkRefusedAnswer(t *testing.T, a *pb.ReportAnswer, id int64) {
	t.Helper()
	st := status.FromProto(a.GetStatus())
	var info *errdetails.ErrorInfo
	for _, d := range st.Details() {
		if i, ok := d.(*errdetails.ErrorInfo); ok {
			info = i
		}
	}
	if st.Code() != codes.FailedPrecondition || info == nil || info.GetReason() != pb.ReasonResultRefused ||
		info.GetMetadata()["task_id"] != fmt.Sprint(id) || !strings.Contains(st.Message(), "ledger closed") ||
		!strings.Contains(st.Message(), fmt.Sprintf("task %d ", id)) {
		t.Errorf("the refused result's answer: %v %q %v; want FAILED_PRECONDITION, RESULT_REFUSED for task %d", st.Code(), st.Message(), info, id)
	}
}
