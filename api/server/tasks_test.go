package server_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func TestEnqueueGetList(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	got := h.enqueue(t, &pb.NewTask{
		Kind: "email.send", Args: []byte(`{"to":"a@example.com"}`), Queue: "mail", Group: "smtp",
		Priority: 5, Policy: "10 5s 10m", Timeout: durationpb.New(30 * time.Second), Name: "welcome",
	})
	if got.GetId() == 0 || got.GetState() != pb.TaskState_TASK_STATE_READY || got.GetQueue() != "mail" || got.GetGroup() != "smtp" ||
		got.GetPriority() != 5 || got.GetPolicy() != "10 5s 10m" || got.GetTimeout().AsDuration() != 30*time.Second {
		t.Fatalf("enqueued %v", got)
	}
	if g := h.get(t, got.GetId()); !bytes.Equal(g.GetArgs(), []byte(`{"to":"a@example.com"}`)) || g.GetKind() != "email.send" {
		t.Fatalf("got %v", g)
	}
	h.enqueue(t, &pb.NewTask{Kind: "email.send"})
	h.enqueue(t, &pb.NewTask{Kind: "report.build"})

	l, err := h.tasks.List(ctx(t), &pb.ListRequest{Kind: "email.send", PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.GetTasks()) != 1 || l.GetTasks()[0].GetId() != got.GetId() || l.GetNextPageToken() == "" {
		t.Fatalf("first page %v", l)
	}
	l, err = h.tasks.List(ctx(t), &pb.ListRequest{Kind: "email.send", PageToken: l.GetNextPageToken(), PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.GetTasks()) != 1 || l.GetTasks()[0].GetId() == got.GetId() || l.GetNextPageToken() != "" {
		t.Fatalf("last page %v", l)
	}
	l, err = h.tasks.List(ctx(t), &pb.ListRequest{States: []pb.TaskState{pb.TaskState_TASK_STATE_READY}})
	if err != nil || len(l.GetTasks()) != 3 {
		t.Fatalf("list ready: %v, %v", l, err)
	}
	_, err = h.tasks.List(ctx(t), &pb.ListRequest{States: []pb.TaskState{pb.TaskState_TASK_STATE_READY, pb.TaskState_TASK_STATE_UNSPECIFIED}})
	wantCode(t, err, codes.InvalidArgument, "states[1]", "TASK_STATE_UNSPECIFIED is not a state")
	_, err = h.tasks.List(ctx(t), &pb.ListRequest{States: []pb.TaskState{99}})
	wantCode(t, err, codes.InvalidArgument, "states[0]", "99 is not a state")
}

func TestListPageFitsAnswer(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{MaxAnswer: 100}, "")
	args := []byte(`"` + strings.Repeat("x", 60) + `"`)
	for range 3 {
		h.enqueue(t, &pb.NewTask{Kind: "k", Args: args})
	}
	l, err := h.tasks.List(ctx(t), &pb.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.GetTasks()) != 1 || l.GetNextPageToken() == "" {
		t.Fatalf("a page of 3 tasks of 62 bytes within 100: %d tasks, next %q", len(l.GetTasks()), l.GetNextPageToken())
	}
	// Without args, the three fit.
	l, err = h.tasks.List(ctx(t), &pb.ListRequest{View: pb.TaskView_TASK_VIEW_BASIC})
	if err != nil || len(l.GetTasks()) != 3 || l.GetNextPageToken() != "" {
		t.Fatalf("a BASIC page of 3 tasks: %v (%v)", l, err)
	}
}

// TestListPages: List pages by AIP-158, page_size and an opaque token
// that continues the same query only; every task is listed once.
func TestListPages(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	for i := range 7 {
		h.enqueue(t, &pb.NewTask{Kind: []string{"a", "b"}[i%2], Args: []byte(`{"n": 1}`)})
	}
	var seen []int64
	req := &pb.ListRequest{Kind: "a", PageSize: 2}
	for pages := 0; ; pages++ {
		l, err := h.tasks.List(ctx(t), req)
		if err != nil || pages > 3 {
			t.Fatalf("page %d: %v (%v)", pages, l, err)
		}
		for _, tk := range l.GetTasks() {
			if tk.GetKind() != "a" || tk.GetArgsOmitted() || string(tk.GetArgs()) != `{"n": 1}` {
				t.Fatalf("listed %v", tk)
			}
			seen = append(seen, tk.GetId())
		}
		if l.GetNextPageToken() == "" {
			break
		}
		req.PageToken = l.GetNextPageToken()
	}
	if !slices.Equal(seen, []int64{1, 3, 5, 7}) {
		t.Fatalf("listed %v, want 1 3 5 7", seen)
	}
	first, err := h.tasks.List(ctx(t), &pb.ListRequest{Kind: "a", PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	tok := first.GetNextPageToken()
	// The token continues its own query, whatever the page size or view.
	if l, err := h.tasks.List(ctx(t), &pb.ListRequest{Kind: "a", PageToken: tok, PageSize: 5000, View: pb.TaskView_TASK_VIEW_BASIC}); err != nil ||
		len(l.GetTasks()) != 3 || !l.GetTasks()[0].GetArgsOmitted() || len(l.GetTasks()[0].GetArgs()) != 0 {
		t.Fatalf("the rest, without args: %v (%v)", l, err)
	}
	_, err = h.tasks.List(ctx(t), &pb.ListRequest{Kind: "b", PageToken: tok})
	wantCode(t, err, codes.InvalidArgument, "page_token", "other filters")
	for _, bad := range []string{"nope!", "AA", tok + "A", "x" + tok[1:]} {
		_, err = h.tasks.List(ctx(t), &pb.ListRequest{Kind: "a", PageToken: bad})
		wantCode(t, err, codes.InvalidArgument, "page_token", "not a token this server gave")
	}
	_, err = h.tasks.List(ctx(t), &pb.ListRequest{PageSize: -1})
	wantCode(t, err, codes.InvalidArgument, "page_size")
	_, err = h.tasks.List(ctx(t), &pb.ListRequest{View: 7})
	wantCode(t, err, codes.InvalidArgument, "view")
}

func TestGetErrors(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	_, err := h.tasks.Get(ctx(t), &pb.GetRequest{Id: 42})
	wantCode(t, err, codes.NotFound, "42")
	_, err = h.tasks.Get(ctx(t), &pb.GetRequest{})
	wantCode(t, err, codes.InvalidArgument, "id", "task id")
}

func TestEnqueueIdempotent(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	n := &pb.NewTask{Kind: "email.send", Args: []byte(`{"n":1}`), IdempotencyKey: "order-17/welcome"}
	first, err := h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: n})
	if err != nil || first.GetExisted() {
		t.Fatalf("first enqueue: %v, %v; want a task created", first, err)
	}
	again, err := h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: n}) // as if the first answer had been lost
	if err != nil || again.GetTask().GetId() != first.GetTask().GetId() || !again.GetExisted() {
		t.Fatalf("a repeated key answered %v, %v; want task %d, existed", again, err, first.GetTask().GetId())
	}
	other := &pb.NewTask{Kind: "email.send", Args: []byte(`{"n":2}`), IdempotencyKey: "order-17/welcome"}
	_, err = h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: other})
	wantCode(t, err, codes.AlreadyExists, "order-17/welcome", fmt.Sprintf("task %d", first.GetTask().GetId()), "other args")
	var info *errdetails.ErrorInfo
	for _, d := range status.Convert(err).Details() {
		if i, ok := d.(*errdetails.ErrorInfo); ok {
			info = i
		}
	}
	if info.GetReason() != "IDEMPOTENCY_KEY_CONFLICT" || info.GetMetadata()["existing_task_id"] != fmt.Sprint(first.GetTask().GetId()) ||
		info.GetMetadata()["key"] != "order-17/welcome" || info.GetMetadata()["differs"] != "args" {
		t.Errorf("the conflict's ErrorInfo detail is %v", info)
	}
	other.ReturnExisting = true
	got, err := h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: other})
	if err != nil || got.GetTask().GetId() != first.GetTask().GetId() || !got.GetExisted() || string(got.GetTask().GetArgs()) != `{"n":1}` {
		t.Errorf("other args with return_existing: %v, %v; want task %d as stored, existed", got, err, first.GetTask().GetId())
	}
	if c := h.count(t); c != 1 {
		t.Fatalf("%d tasks, want 1", c)
	}
}

func TestEnqueueBatch(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	req := &pb.EnqueueBatchRequest{}
	for i := range 3 {
		req.Tasks = append(req.Tasks, &pb.NewTask{Kind: "resize", Args: fmt.Appendf(nil, `{"i":%d}`, i), IdempotencyKey: fmt.Sprint("img-", i)})
	}
	r, err := h.tasks.EnqueueBatch(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if e := r.GetExisted(); len(e) != 3 || e[0] || e[1] || e[2] {
		t.Errorf("existed %v for a batch that created its tasks, want three false", e)
	}
	ids := map[int64]bool{}
	for _, tk := range r.GetTasks() {
		ids[tk.GetId()] = true
		if tk.GetArgs() != nil {
			t.Errorf("task %d: a batch's answer carries args", tk.GetId())
		}
	}
	if len(ids) != 3 {
		t.Fatalf("ids %v", ids)
	}
	again, err := h.tasks.EnqueueBatch(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	for i, tk := range again.GetTasks() {
		if i >= len(again.GetExisted()) || !again.GetExisted()[i] {
			t.Errorf("item %d of a repeated batch: existed %v, want true", i, again.GetExisted())
		}
		if tk.GetId() != r.GetTasks()[i].GetId() {
			t.Errorf("item %d: a repeated batch made task %d, not %d", i, tk.GetId(), r.GetTasks()[i].GetId())
		}
	}
	if c := h.count(t); c != 3 {
		t.Fatalf("%d tasks, want 3", c)
	}
}

// TestEnqueueRejects checks that bad requests are INVALID_ARGUMENT, say
// what was wrong where, and write nothing.
func TestEnqueueRejects(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{MaxBatch: 5}, "")
	big := append(append([]byte(`"`), bytes.Repeat([]byte("x"), 1<<20)...), '"')
	ok := func() *pb.NewTask { return &pb.NewTask{Kind: "ok"} }
	batch := func(n int, bad *pb.NewTask) *pb.EnqueueBatchRequest {
		r := &pb.EnqueueBatchRequest{}
		for range n {
			r.Tasks = append(r.Tasks, ok())
		}
		if bad != nil {
			r.Tasks = append(r.Tasks, bad)
		}
		return r
	}
	tests := []struct {
		name  string
		one   *pb.NewTask
		batch *pb.EnqueueBatchRequest
		field string
		says  []string
	}{
		{"oversize payload", &pb.NewTask{Kind: "k", Args: big}, nil, "task.args", []string{"1048578 bytes", "1 MiB", "GRIT_MAX_PAYLOAD"}},
		{"bad JSON", &pb.NewTask{Kind: "k", Args: []byte(`{"a":`)}, nil, "task.args", []string{"not JSON"}},
		{"not UTF-8", &pb.NewTask{Kind: "k", Args: []byte("\"caf\xe9\"")}, nil, "task.args", []string{"not valid UTF-8 (at byte 4)"}},
		{"malformed kind", &pb.NewTask{Kind: "send email!"}, nil, "task.kind", []string{`"send email!" is not a name`, "e.g. email.send"}},
		{"no kind", &pb.NewTask{}, nil, "task.kind", []string{"missing"}},
		{"no task", nil, nil, "task", []string{"missing"}},
		{"malformed queue", &pb.NewTask{Kind: "k", Queue: "-q"}, nil, "task.queue", []string{"not a name"}},
		{"bad policy", &pb.NewTask{Kind: "k", Policy: "10 5x"}, nil, "task.policy", []string{"5x"}},
		{"policy both ways", &pb.NewTask{Kind: "k", Policy: "10 5s", RetryPolicy: &pb.RetryPolicy{MaxAttempts: 1}}, nil, "task.retry_policy", []string{`set with policy "10 5s"`, "not both"}},
		{"policy fields wrong", &pb.NewTask{Kind: "k", RetryPolicy: &pb.RetryPolicy{MaxAttempts: 3, Backoff: &pb.Backoff{}}}, nil, "task.retry_policy.backoff.initial", []string{"missing"}},
		{"policy fields without attempts", nil, batch(2, &pb.NewTask{Kind: "k", RetryPolicy: &pb.RetryPolicy{}}), "tasks[2].retry_policy.max_attempts", []string{"missing", "unlimited"}},
		{"negative timeout", &pb.NewTask{Kind: "k", Timeout: durationpb.New(-time.Second)}, nil, "task.timeout", []string{"negative (-1s)", "want 0 or more"}},
		{"control in key", &pb.NewTask{Kind: "k", IdempotencyKey: "a\x00b"}, nil, "task.idempotency_key", []string{"control character"}},
		{"long key", &pb.NewTask{Kind: "k", IdempotencyKey: strings.Repeat("k", 201)}, nil, "task.idempotency_key", []string{"at most 200"}},
		{"huge priority", &pb.NewTask{Kind: "k", Priority: 1 << 40}, nil, "task.priority", []string{"out of range"}},
		{"too large a batch", nil, batch(6, nil), "tasks", []string{"more than the limit of 5 items", "GRIT_MAX_BATCH"}},
		{"a batch far too large", nil, batch(5000, nil), "tasks", []string{"more than the limit of 5 items", "GRIT_MAX_BATCH"}},
		{"empty batch", nil, &pb.EnqueueBatchRequest{}, "tasks", []string{"empty"}},
		{"one bad item", nil, batch(3, &pb.NewTask{Kind: "k", Args: []byte("nope")}), "tasks[3].args", []string{"not JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var err error
			if tt.batch != nil {
				_, err = h.tasks.EnqueueBatch(ctx(t), tt.batch)
			} else {
				_, err = h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: tt.one})
			}
			wantCode(t, err, codes.InvalidArgument, append([]string{tt.field + ":"}, tt.says...)...)
			if f, derr := violation(err); derr != nil || f != tt.field {
				t.Errorf("BadRequest field %q (%v), want %q", f, derr, tt.field)
			}
			if c := h.count(t); c != 0 {
				t.Fatalf("a rejected request wrote %d tasks", c)
			}
		})
	}
}

// TestWayOversizeRequest: a request past MaxMessage, up to twice it, is
// answered as the permanent mistake it is: INVALID_ARGUMENT with the
// reason MESSAGE_TOO_LARGE, its size and the limit, on either service,
// not gRPC's RESOURCE_EXHAUSTED, which retry policies retry. Past twice
// the limit gRPC refuses it unread, RESOURCE_EXHAUSTED (docs/api.md).
func TestWayOversizeRequest(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{MaxPayload: 1 << 10, MaxMessage: 64 << 10}, "")
	args := []byte(`"` + strings.Repeat("x", 100<<10) + `"`)
	_, err := h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: &pb.NewTask{Kind: "k", Args: args}})
	wantInfo(t, err, codes.InvalidArgument, pb.ReasonMessageTooLarge, map[string]string{"limit": "65536", "size": "102413", "method": pb.TasksService_Enqueue_FullMethodName})
	wantCode(t, err, codes.InvalidArgument, "102413 bytes, over the server's limit of 65536", "split it", "--max-message")
	_, err = h.workers.Complete(ctx(t), &pb.CompleteRequest{TaskId: 1, LeaseToken: 1, WorkerId: "w", Output: strings.Repeat("x", 100<<10)})
	wantInfo(t, err, codes.InvalidArgument, pb.ReasonMessageTooLarge, map[string]string{"limit": "65536", "size": "102411", "method": pb.WorkersService_Complete_FullMethodName})
	args = []byte(`"` + strings.Repeat("x", 200<<10) + `"`)
	_, err = h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: &pb.NewTask{Kind: "k", Args: args}})
	wantCode(t, err, codes.ResourceExhausted, "larger than max")
	if c := h.count(t); c != 0 {
		t.Fatalf("wrote %d tasks", c)
	}
	// The server goes on answering.
	h.enqueue(t, &pb.NewTask{Kind: "k"})
}

func TestCancel(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	tk := h.enqueue(t, &pb.NewTask{Kind: "k"})
	for range 2 { // the second as if the first answer had been lost
		r, err := h.tasks.Cancel(ctx(t), &pb.CancelRequest{Id: tk.GetId()})
		if err != nil {
			t.Fatal(err)
		}
		if r.GetTask().GetState() != pb.TaskState_TASK_STATE_CANCELLED {
			t.Fatalf("cancelled: %v", r.GetTask())
		}
	}
	done := h.enqueue(t, &pb.NewTask{Kind: "done"})
	c := h.claimOne(t, "w1", "done")
	if _, err := h.workers.Complete(ctx(t), &pb.CompleteRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: c.GetLeaseToken()}); err != nil {
		t.Fatal(err)
	}
	_, err := h.tasks.Cancel(ctx(t), &pb.CancelRequest{Id: done.GetId()})
	wantCode(t, err, codes.FailedPrecondition, "is SUCCESS", "only a task that has not ended")
	_, err = h.tasks.Cancel(ctx(t), &pb.CancelRequest{Id: 999})
	wantCode(t, err, codes.NotFound)
}

func TestPublish(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	if err := h.store.Subscribe(ctx(t), task.Subscription{Topic: "ingest.ready", Kind: "ingest"}); err != nil {
		t.Fatal(err)
	}
	ev := &pb.PublishRequest{Events: []*pb.Event{{Topic: "ingest.ready", Payload: []byte(`{"batch":7}`), Key: "batch-7"}}}
	var ids []int64
	for range 2 { // the second as if the first answer had been lost
		r, err := h.tasks.Publish(ctx(t), ev)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.GetDeliveries()) != 1 || r.GetDeliveries()[0].GetKind() != "ingest" {
			t.Fatalf("deliveries %v", r.GetDeliveries())
		}
		ids = append(ids, r.GetDeliveries()[0].GetId())
	}
	if ids[0] != ids[1] || h.count(t) != 1 {
		t.Fatalf("a repeated key delivered again: %v, %d tasks", ids, h.count(t))
	}
	if g := h.get(t, ids[0]); string(g.GetArgs()) != `{"batch":7}` {
		t.Fatalf("delivery args %s", g.GetArgs())
	}
	_, err := h.tasks.Publish(ctx(t), &pb.PublishRequest{Events: []*pb.Event{{Topic: "bad topic"}}})
	wantCode(t, err, codes.InvalidArgument, "events[0].topic", "not a name")
	_, err = h.tasks.Publish(ctx(t), &pb.PublishRequest{})
	wantCode(t, err, codes.InvalidArgument, "events: empty")
	if h.count(t) != 1 {
		t.Fatal("a rejected publish wrote tasks")
	}
}

func TestDeadLetter(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	poison := func() int64 {
		tk := h.enqueue(t, &pb.NewTask{Kind: "parse", Policy: "10 1ms"})
		h.failTwice(t, "parse")
		if g := h.get(t, tk.GetId()); g.GetState() != pb.TaskState_TASK_STATE_DEAD_LETTER {
			t.Fatalf("after two identical failures: %v", g)
		}
		return tk.GetId()
	}
	act := func(id int64, a pb.DeadLetterAction) (*pb.Task, error) {
		r, err := h.tasks.DeadLetter(ctx(t), &pb.DeadLetterRequest{Id: id, Action: a})
		return r.GetTask(), err
	}
	id := poison()
	for range 2 {
		got, err := act(id, pb.DeadLetterAction_DEAD_LETTER_ACTION_REPLAY)
		if err != nil || got.GetState() != pb.TaskState_TASK_STATE_READY || got.GetStreak() != 0 {
			t.Fatalf("replay: %v, %v", got, err)
		}
	}
	h.failTwice(t, "parse")
	for range 2 {
		if got, err := act(id, pb.DeadLetterAction_DEAD_LETTER_ACTION_SKIP); err != nil || got.GetState() != pb.TaskState_TASK_STATE_SKIPPED {
			t.Fatalf("skip: %v, %v", got, err)
		}
	}
	_, err := act(id, pb.DeadLetterAction_DEAD_LETTER_ACTION_FAIL)
	wantCode(t, err, codes.FailedPrecondition, "is SKIPPED", "only a DEAD_LETTER task")
	id = poison()
	if got, err := act(id, pb.DeadLetterAction_DEAD_LETTER_ACTION_FAIL); err != nil || got.GetState() != pb.TaskState_TASK_STATE_FAILED {
		t.Fatalf("fail: %v, %v", got, err)
	}
	_, err = act(id, pb.DeadLetterAction_DEAD_LETTER_ACTION_UNSPECIFIED)
	wantCode(t, err, codes.InvalidArgument, "action", "REPLAY, SKIP or FAIL")
}

// failTwice claims a task of kind twice and fails it the same way each
// time (ids differ: they are masked).
func (h *harness) failTwice(t *testing.T, kind string) {
	t.Helper()
	for i := range 2 {
		c := h.claimOne(t, "w1", kind)
		msg := fmt.Sprintf("parse row %d: unexpected token", 100+i)
		if _, err := h.workers.Fail(ctx(t), &pb.FailRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: c.GetLeaseToken(), ErrorClass: pb.ErrorClass_ERROR_CLASS_UNCLASSIFIED, Message: msg}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRetryPolicyAsFields: a policy given as fields is kept as its string,
// and every task answers its policy both ways.
func TestRetryPolicyAsFields(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	fields := &pb.RetryPolicy{MaxAttempts: 6, Backoff: &pb.Backoff{Initial: durationpb.New(time.Second), Max: durationpb.New(time.Minute), Jitter: pb.Jitter_JITTER_EQUAL},
		Classes: []*pb.ClassRetry{{ErrorClass: pb.ErrorClass_ERROR_CLASS_TRANSIENT, MaxAttempts: 21, Backoff: &pb.Backoff{Initial: durationpb.New(2 * time.Second), Max: durationpb.New(5 * time.Minute)}}}}
	tk := h.enqueue(t, &pb.NewTask{Kind: "k", RetryPolicy: fields})
	const want = "5 1s 1m jitter=equal transient=20,2s,5m"
	got := h.get(t, tk.GetId())
	if got.GetPolicy() != want || tk.GetPolicy() != want {
		t.Fatalf("policy %q (enqueue answered %q), want %q", got.GetPolicy(), tk.GetPolicy(), want)
	}
	fields.Classes[0].Backoff.Jitter = pb.Jitter_JITTER_FULL // answers spell the default out
	if !proto.Equal(got.GetRetryPolicy(), fields) {
		t.Errorf("retry_policy %v, want %v", got.GetRetryPolicy(), fields)
	}
	// A policy given as a string answers its fields too; none, none.
	str := h.enqueue(t, &pb.NewTask{Kind: "k", Policy: "10 5s 10m"})
	if r := h.get(t, str.GetId()).GetRetryPolicy(); r.GetMaxAttempts() != 11 || r.GetBackoff().GetInitial().AsDuration() != 5*time.Second ||
		r.GetBackoff().GetMax().AsDuration() != 10*time.Minute || r.GetBackoff().GetJitter() != pb.Jitter_JITTER_FULL {
		t.Errorf("10 5s 10m as fields: %v", r)
	}
	if r := h.get(t, h.enqueue(t, &pb.NewTask{Kind: "k"}).GetId()).GetRetryPolicy(); r != nil {
		t.Errorf("no policy: fields %v", r)
	}
}

// TestArgsOmittedSaysSo: an answer that leaves a task's args out says so,
// so that empty args always mean none.
func TestArgsOmittedSaysSo(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	b, err := h.tasks.EnqueueBatch(ctx(t), &pb.EnqueueBatchRequest{Tasks: []*pb.NewTask{{Kind: "k", Args: []byte(`[1]`)}, {Kind: "k"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range b.GetTasks() {
		if !tk.GetArgsOmitted() || len(tk.GetArgs()) != 0 {
			t.Errorf("EnqueueBatch answered %v, want args omitted, and saying so", tk)
		}
	}
	with, without := h.get(t, b.GetTasks()[0].GetId()), h.get(t, b.GetTasks()[1].GetId())
	if with.GetArgsOmitted() || string(with.GetArgs()) != `[1]` || without.GetArgsOmitted() || len(without.GetArgs()) != 0 {
		t.Errorf("Get answered %v and %v, want args (or none), never omitted", with, without)
	}
	c := h.claimOne(t, "w", "k")
	if c.GetArgsOmitted() {
		t.Errorf("Claim answered %v, want args", c)
	}
	r, err := h.workers.Report(ctx(t), &pb.ReportRequest{WorkerId: "w", Results: []*pb.Result{{TaskId: c.GetId(), LeaseToken: c.GetLeaseToken(), End: &pb.Result_Complete{Complete: &pb.Completed{}}}}})
	if err != nil || !r.GetAnswers()[0].GetTask().GetArgsOmitted() {
		t.Errorf("Report answered %v (%v), want the task with args omitted", r, err)
	}
}

// TestGetHoldsTheResult: Get answers the result a handler set
// (grit.SetResult); List leaves it out.
func TestGetHoldsTheResult(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	if _, err := h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: &pb.NewTask{Kind: "sum"}}); err != nil {
		t.Fatal(err)
	}
	c, err := h.store.Claim(ctx(t), store.ClaimRequest{Worker: "w", Limit: 1})
	if err != nil || len(c) != 1 {
		t.Fatal(c, err)
	}
	if err := h.store.SetResult(ctx(t), c[0].ID, c[0].LeaseToken, []byte(`{"total":14}`)); err != nil {
		t.Fatal(err)
	}
	got, err := h.tasks.Get(ctx(t), &pb.GetRequest{Id: c[0].ID})
	if err != nil || string(got.GetTask().GetResult()) != `{"total":14}` {
		t.Errorf("get: result %q (%v), want the one set", got.GetTask().GetResult(), err)
	}
	l, err := h.tasks.List(ctx(t), &pb.ListRequest{Kind: "sum"})
	if err != nil || len(l.GetTasks()) != 1 || len(l.GetTasks()[0].GetResult()) != 0 {
		t.Errorf("list: %v (%v), want the task without its result", l, err)
	}
}
