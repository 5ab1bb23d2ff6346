package server_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// quarantineOf is a Quarantine of c's items, each a row and its error.
func quarantineOf(c *pb.Task, pol *pb.QuarantinePolicy, rows ...string) *pb.QuarantineRequest {
	r := &pb.QuarantineRequest{WorkerId: c.GetLeaseOwner(), TaskId: c.GetId(), LeaseToken: c.GetLeaseToken(), Policy: pol}
	for i := 0; i+1 < len(rows); i += 2 {
		r.Items = append(r.Items, &pb.QuarantineItem{Item: []byte(rows[i]), Error: rows[i+1]})
	}
	return r
}

// completeWith reports c complete with its worker's quarantine policy
// and the items it saw, and answers the report's one answer.
func (h *harness) completeWith(t *testing.T, c *pb.Task, pol *pb.QuarantinePolicy, seen int64) *pb.ReportAnswer {
	t.Helper()
	r, err := h.workers.Report(ctx(t), &pb.ReportRequest{WorkerId: c.GetLeaseOwner(), Results: []*pb.Result{{TaskId: c.GetId(), LeaseToken: c.GetLeaseToken(),
		End: &pb.Result_Complete{Complete: &pb.Completed{Quarantine: pol, Seen: seen}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return r.GetAnswers()[0]
}

// TestRemoteWorkerQuarantinesARow: a remote worker sets one row of ten
// aside and completes its task, which succeeds; the attempt alerts once;
// an operator finds the row by its fingerprint, fingerprinted as a
// failure's message is, and replays it: a task of the policy's kind, in
// the task's queue, with the row as its args, and the row is no longer
// quarantined. The replay is audited.
func TestRemoteWorkerQuarantinesARow(t *testing.T) {
	t.Parallel()
	alerts := make(chan alert.Event, 10)
	h := start(t, server.Config{Alerting: alert.Alerting{OnAlert: func(ev alert.Event) { alerts <- ev }}}, "")
	tk := h.enqueue(t, &pb.NewTask{Kind: "import", Queue: "etl", Args: []byte(`{"rows":[1,2,3,4,5,6,7,8,9,10]}`)})
	c := h.claimOne(t, "w1", "import")
	pol := &pb.QuarantinePolicy{Kind: "import.row", Max: 2}
	const why = `row 7: no account "acct-1007"`
	got, err := h.workers.Quarantine(ctx(t), quarantineOf(c, pol, `{"row":7}`, why))
	if err != nil {
		t.Fatal(err)
	}
	fp := retry.Fingerprint(errors.New(`row 8: no account "acct-1008"`)) // masked alike
	if got.GetTotal() != 1 || got.GetTooMany() || len(got.GetFingerprints()) != 1 || got.GetFingerprints()[0] != fp {
		t.Fatalf("quarantine answered %v, want 1 in all, fingerprint %s", got, fp)
	}
	if a := h.completeWith(t, c, pol, 10); a.GetStatus() != nil || a.GetTask().GetState().Task() != task.Success {
		t.Fatalf("complete: %v", a)
	}
	select {
	case ev := <-alerts:
		if ev.Type != alert.QuarantinedItems || ev.TaskID != tk.GetId() || ev.Tasks != 1 || ev.Fingerprint != fp || ev.Error != why || ev.Queue != "etl" {
			t.Errorf("alert %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no alert for the quarantined row")
	}
	h.server.DrainAlerts(t.Context())
	select {
	case ev := <-alerts:
		t.Errorf("a second alert %+v", ev)
	default:
	}

	list, err := h.tasks.ListQuarantined(ctx(t), &pb.ListQuarantinedRequest{Fingerprint: fp})
	if err != nil || len(list.GetItems()) != 1 {
		t.Fatalf("list by fingerprint: %v %v", list, err)
	}
	it := list.GetItems()[0]
	if it.GetTaskId() != tk.GetId() || it.GetKind() != "import" || it.GetQueue() != "etl" || it.GetReplayKind() != "import.row" ||
		string(it.GetItem()) != `{"row":7}` || it.GetError() != why || it.GetAttempt() != 1 || it.GetCreatedAt() == nil {
		t.Errorf("item %v", it)
	}
	gs, err := h.tasks.QuarantineGroups(ctx(t), &pb.QuarantineGroupsRequest{})
	if err != nil || len(gs.GetGroups()) != 1 || gs.GetGroups()[0].GetCount() != 1 || gs.GetGroups()[0].GetSampleItem() != it.GetId() ||
		strings.Join(gs.GetGroups()[0].GetKinds(), ",") != "import" {
		t.Errorf("groups %v %v", gs, err)
	}
	rep, err := h.tasks.ReplayQuarantined(ctx(t), &pb.ReplayQuarantinedRequest{Fingerprint: fp})
	if err != nil || len(rep.GetTasks()) != 1 || rep.GetDropped() != 1 || len(rep.GetRefused()) != 0 {
		t.Fatalf("replay: %v %v", rep, err)
	}
	replayed := h.get(t, rep.GetTasks()[0].GetId())
	if replayed.GetKind() != "import.row" || replayed.GetQueue() != "etl" || string(replayed.GetArgs()) != `{"row":7}` || replayed.GetState().Task() != task.Ready {
		t.Errorf("the replayed task %v", replayed)
	}
	if list, err := h.tasks.ListQuarantined(ctx(t), &pb.ListQuarantinedRequest{}); err != nil || len(list.GetItems()) != 0 {
		t.Errorf("after the replay: %v %v, want nothing quarantined", list, err)
	}
	log, err := h.store.AuditLog(ctx(t), 0, 0)
	if err != nil || len(log) != 1 || log[0].Action != "replay" || log[0].Target != "quarantined items with fingerprint "+fp || log[0].Count != 1 || log[0].Who != "api" {
		t.Errorf("audit log %+v (%v)", log, err)
	}
}

// TestRemoteQuarantinePastItsPolicy: past max the worker is told so at
// once (too_many, with the message to fail with), and a complete with
// its policy fails, permanently; past max_share of the items it saw, the
// complete fails too. A row set aside again is not counted again. The
// items stay quarantined.
func TestRemoteQuarantinePastItsPolicy(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	h.enqueue(t, &pb.NewTask{Kind: "import", Policy: "5 10ms"})
	c := h.claimOne(t, "w1", "import")
	pol := &pb.QuarantinePolicy{Kind: "import.row", Max: 2}
	got, err := h.workers.Quarantine(ctx(t), quarantineOf(c, pol, `1`, "bad date", `2`, "bad date", `1`, "bad date"))
	if err != nil || got.GetTotal() != 2 || got.GetTooMany() {
		t.Fatalf("two rows (one twice): %v %v, want 2 in all, tolerated", got, err)
	}
	got, err = h.workers.Quarantine(ctx(t), quarantineOf(c, pol, `3`, "bad date"))
	if err != nil || got.GetTotal() != 3 || !got.GetTooMany() || !strings.Contains(got.GetVerdict(), "set aside 3 items, more than the 2 it tolerates") {
		t.Fatalf("a third row: %v %v, want too many", got, err)
	}
	a := h.completeWith(t, c, pol, 0)
	if a.GetStatus() != nil || a.GetTask().GetState().Task() != task.Failed || a.GetDecision() != pb.Decision_DECISION_PERMANENT {
		t.Fatalf("a complete past max: %v, want FAILED at once", a)
	}
	if got := h.get(t, c.GetId()); !strings.Contains(got.GetLastError(), "more than the 2 it tolerates") {
		t.Errorf("its error %q", got.GetLastError())
	}
	if again := h.completeWith(t, c, pol, 0); again.GetStatus() != nil || again.GetTask().GetState().Task() != task.Failed {
		t.Errorf("the same report again (its answer lost): %v, want OK", again)
	}

	h.enqueue(t, &pb.NewTask{Kind: "export"})
	c = h.claimOne(t, "w1", "export")
	share := &pb.QuarantinePolicy{MaxShare: 0.1}
	if _, err := h.workers.Quarantine(ctx(t), quarantineOf(c, share, `"a"`, "no account", `"b"`, "no account")); err != nil {
		t.Fatal(err)
	}
	if a := h.completeWith(t, c, share, 10); a.GetTask().GetState().Task() != task.Failed {
		t.Errorf("2 of 10 against a share of 0.1: %v, want FAILED", a)
	}
	if got := h.get(t, c.GetId()); !strings.Contains(got.GetLastError(), "set aside 2 of the 10 items it reported it saw") {
		t.Errorf("its error %q", got.GetLastError())
	}
	if list, err := h.tasks.ListQuarantined(ctx(t), &pb.ListQuarantinedRequest{}); err != nil || len(list.GetItems()) != 5 {
		t.Errorf("%d items quarantined (%v), want all 5 kept", len(list.GetItems()), err)
	}

	// Without its policy, a complete is a success, whatever was set aside.
	h.enqueue(t, &pb.NewTask{Kind: "export"})
	c = h.claimOne(t, "w1", "export")
	if _, err := h.workers.Quarantine(ctx(t), quarantineOf(c, nil, `"a"`, "no account")); err != nil {
		t.Fatal(err)
	}
	if a := h.completeWith(t, c, nil, 0); a.GetTask().GetState().Task() != task.Success {
		t.Errorf("a complete without a policy: %v, want SUCCESS", a)
	}
}

// TestRemoteQuarantineRefused: a lease the worker does not hold, and bad
// items or policies, are refused, naming the field; nothing is kept.
func TestRemoteQuarantineRefused(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	h.enqueue(t, &pb.NewTask{Kind: "import"})
	c := h.claimOne(t, "w1", "import")
	ok := func() *pb.QuarantineRequest { return quarantineOf(c, &pb.QuarantinePolicy{Kind: "row"}, `1`, "bad") }
	for _, tc := range []struct {
		name  string
		edit  func(*pb.QuarantineRequest)
		code  codes.Code
		field string
	}{
		{"another worker", func(r *pb.QuarantineRequest) { r.WorkerId = "w2" }, codes.FailedPrecondition, ""},
		{"another token", func(r *pb.QuarantineRequest) { r.LeaseToken++ }, codes.FailedPrecondition, ""},
		{"no items", func(r *pb.QuarantineRequest) { r.Items = nil }, codes.InvalidArgument, "items"},
		{"not JSON", func(r *pb.QuarantineRequest) { r.Items[0].Item = []byte(`{`) }, codes.InvalidArgument, "items[0].item"},
		{"no item", func(r *pb.QuarantineRequest) { r.Items[0].Item = nil }, codes.InvalidArgument, "items[0].item"},
		{"too large", func(r *pb.QuarantineRequest) {
			r.Items[0].Item = []byte(`"` + strings.Repeat("x", task.MaxQuarantinedItem) + `"`)
		}, codes.InvalidArgument, "items[0].item"},
		{"no error", func(r *pb.QuarantineRequest) { r.Items[0].Error = "" }, codes.InvalidArgument, "items[0].error"},
		{"its own kind", func(r *pb.QuarantineRequest) { r.Policy.Kind = "import" }, codes.InvalidArgument, "policy.kind"},
		{"a bad kind", func(r *pb.QuarantineRequest) { r.Policy.Kind = "no spaces" }, codes.InvalidArgument, "policy.kind"},
		{"a negative max", func(r *pb.QuarantineRequest) { r.Policy.Max = -1 }, codes.InvalidArgument, "policy"},
		{"a share over 1", func(r *pb.QuarantineRequest) { r.Policy.MaxShare = 1.5 }, codes.InvalidArgument, "policy"},
	} {
		r := ok()
		tc.edit(r)
		_, err := h.workers.Quarantine(ctx(t), r)
		if status.Code(err) != tc.code {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.code)
			continue
		}
		if tc.field != "" {
			if f, _ := violation(err); f != tc.field {
				t.Errorf("%s: field %q, want %q (%v)", tc.name, f, tc.field, err)
			}
		}
	}
	if items, err := h.store.ListQuarantined(ctx(t), task.QuarantineFilter{}); err != nil || len(items) != 0 {
		t.Errorf("kept %v (%v), want nothing", items, err)
	}
	// A report's policy is checked as Quarantine's.
	r, err := h.workers.Report(ctx(t), &pb.ReportRequest{WorkerId: "w1", Results: []*pb.Result{{TaskId: c.GetId(), LeaseToken: c.GetLeaseToken(),
		End: &pb.Result_Complete{Complete: &pb.Completed{Quarantine: &pb.QuarantinePolicy{Max: -2}}}}}})
	if err != nil || r.GetAnswers()[0].GetStatus().GetCode() != int32(codes.InvalidArgument) {
		t.Errorf("a complete with a negative max: %v %v", r, err)
	}
	h.running(t, c)
}

// TestQuarantineOperators: replay and drop name items by ids or by a
// fingerprint, one of the two; an id that names no item is refused and
// nothing is done; a drop is audited; a read-only token lists but does
// not act; an item whose handler named no kind is refused a replay and
// stays; a list pages.
func TestQuarantineOperators(t *testing.T) {
	t.Parallel()
	const reader = "reader-token-0123456789"
	h := start(t, server.Config{Tokens: []server.Token{{Value: testToken}, {Value: reader, Role: server.RoleReadOnly}}}, testToken)
	h.enqueue(t, &pb.NewTask{Kind: "import"})
	c := h.claimOne(t, "w1", "import")
	var rows []string
	for i := range 5 {
		rows = append(rows, fmt.Sprint(i), fmt.Sprintf("row %d: bad date", i))
	}
	if _, err := h.workers.Quarantine(ctx(t), quarantineOf(c, nil, rows...)); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	var token string
	for page := 0; ; page++ {
		r, err := h.tasks.ListQuarantined(ctx(t), &pb.ListQuarantinedRequest{TaskId: c.GetId(), PageSize: 2, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range r.GetItems() {
			ids = append(ids, it.GetId())
		}
		if token = r.GetNextPageToken(); token == "" {
			break
		}
		if _, err := h.tasks.ListQuarantined(ctx(t), &pb.ListQuarantinedRequest{PageSize: 2, PageToken: token}); status.Code(err) != codes.InvalidArgument {
			t.Errorf("a token with other filters: %v", err)
		}
	}
	if len(ids) != 5 || ids[0] >= ids[4] {
		t.Fatalf("paged ids %v, want the 5, oldest first", ids)
	}

	for name, r := range map[string]*pb.DropQuarantinedRequest{
		"both":          {Ids: ids[:1], Fingerprint: "abc"},
		"neither":       {},
		"an unknown id": {Ids: []int64{ids[0], 999}},
		"a bad id":      {Ids: []int64{-3}},
	} {
		_, err := h.tasks.DropQuarantined(ctx(t), r)
		wantCode(t, err, codes.InvalidArgument)
		if name == "an unknown id" && !strings.Contains(err.Error(), "999: no quarantined item has it") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := h.tasks.ReplayQuarantined(ctx(t), &pb.ReplayQuarantinedRequest{Ids: []int64{999}}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("replay of an unknown id: %v", err)
	}
	many := make([]int64, 1001) // past the batch limit, packed on the wire
	for i := range many {
		many[i] = ids[0]
	}
	_, err := h.tasks.DropQuarantined(ctx(t), &pb.DropQuarantinedRequest{Ids: many})
	wantCode(t, err, codes.InvalidArgument, "ids: more than the limit of 1000 items")
	rep, err := h.tasks.ReplayQuarantined(ctx(t), &pb.ReplayQuarantinedRequest{Ids: ids[:1]})
	if err != nil || len(rep.GetTasks()) != 0 || len(rep.GetRefused()) != 1 || !strings.Contains(rep.GetRefused()[0], "names no kind to replay it as") {
		t.Errorf("replay without a kind: %v %v, want it refused", rep, err)
	}

	conn := dial(t, h.addr, reader)
	ro := pb.NewTasksServiceClient(conn)
	if r, err := ro.ListQuarantined(ctx(t), &pb.ListQuarantinedRequest{}); err != nil || len(r.GetItems()) != 5 {
		t.Errorf("a read-only list: %v %v", r, err)
	}
	if _, err := ro.QuarantineGroups(ctx(t), &pb.QuarantineGroupsRequest{}); err != nil {
		t.Errorf("read-only groups: %v", err)
	}
	if _, err := ro.DropQuarantined(ctx(t), &pb.DropQuarantinedRequest{Ids: ids}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("a read-only drop: %v", err)
	}

	d, err := h.tasks.DropQuarantined(ctx(t), &pb.DropQuarantinedRequest{Ids: ids[:2]})
	if err != nil || d.GetDropped() != 2 {
		t.Fatalf("drop two: %v %v", d, err)
	}
	fp := retry.Fingerprint(errors.New("row 9: bad date"))
	if d, err := h.tasks.DropQuarantined(ctx(t), &pb.DropQuarantinedRequest{Fingerprint: fp}); err != nil || d.GetDropped() != 3 {
		t.Errorf("drop the fingerprint's: %v %v, want the 3 left", d, err)
	}
	log, err := h.store.AuditLog(ctx(t), 0, 0)
	if err != nil || len(log) != 3 || log[1].Action != "drop" || log[1].Count != 2 || !strings.HasPrefix(log[1].Target, "quarantined items "+fmt.Sprint(ids[0])) ||
		!strings.HasPrefix(log[1].Who, "api token ") || log[0].Count != 3 || log[2].Action != "replay" || log[2].Count != 0 {
		b, _ := json.Marshal(log)
		t.Errorf("audit log %s (%v): want the replay refused, then the two drops", b, err)
	}
}
