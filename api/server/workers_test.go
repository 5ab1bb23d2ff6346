package server_test

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/task"
)

func TestClaimHeartbeatComplete(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	tk := h.enqueue(t, &pb.NewTask{Kind: "resize", Args: []byte(`{"w":100}`)})
	r, err := h.workers.Claim(ctx(t), &pb.ClaimRequest{WorkerId: "py-1", Kinds: []string{"resize"}, Limit: 10, Host: "box", Pid: 42, Version: "py/1.0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GetTasks()) != 1 || r.GetLease().AsDuration() != 15*time.Second {
		t.Fatalf("claim: %v", r)
	}
	c := r.GetTasks()[0]
	if c.GetId() != tk.GetId() || c.GetState() != pb.TaskState_TASK_STATE_RUNNING || c.GetAttempt() != 1 || c.GetLeaseToken() == 0 ||
		c.GetLeaseOwner() != "py-1" || string(c.GetArgs()) != `{"w":100}` {
		t.Fatalf("claimed %v", c)
	}
	ws, err := h.store.Workers(ctx(t))
	if err != nil || len(ws) != 1 || ws[0].ID != "py-1" || ws[0].Host != "box" || ws[0].PID != 42 || !ws[0].Active {
		t.Fatalf("workers %+v, %v", ws, err)
	}

	held := &pb.Lease{TaskId: c.GetId(), LeaseToken: c.GetLeaseToken()}
	stale := &pb.Lease{TaskId: c.GetId(), LeaseToken: c.GetLeaseToken() + 1}
	hb, err := h.workers.Heartbeat(ctx(t), &pb.HeartbeatRequest{WorkerId: "py-1", Leases: []*pb.Lease{held, stale}, Lease: dpb(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if len(hb.GetLost()) != 1 || hb.GetLost()[0].GetLeaseToken() != stale.GetLeaseToken() {
		t.Fatalf("lost %v, want only the stale lease", hb.GetLost())
	}
	if exp := h.get(t, c.GetId()).GetLeaseExpires().AsTime(); time.Until(exp) < 30*time.Second {
		t.Fatalf("lease expires %v: not renewed for a minute", exp)
	}

	for range 2 { // the second as if the first answer had been lost
		done, err := h.workers.Complete(ctx(t), &pb.CompleteRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: c.GetLeaseToken(), Output: "resized"})
		if err != nil {
			t.Fatal(err)
		}
		if done.GetTask().GetState() != pb.TaskState_TASK_STATE_SUCCESS {
			t.Fatalf("completed %v", done.GetTask())
		}
	}
	as := h.attempts(t, c.GetId())
	if len(as) != 1 || as[0].Outcome != task.OutcomeSuccess || as[0].Worker != "py-1" || as[0].Output != "resized" {
		t.Fatalf("attempts %+v", as)
	}
	at, err := h.tasks.Attempts(ctx(t), &pb.AttemptsRequest{TaskId: c.GetId()})
	if err != nil || len(at.GetAttempts()) != 1 || at.GetAttempts()[0].GetOutcome() != pb.AttemptOutcome_ATTEMPT_OUTCOME_SUCCESS {
		t.Fatalf("Attempts: %v, %v", at, err)
	}
}

func TestClaimNothingDue(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	h.enqueue(t, &pb.NewTask{Kind: "other"})
	r, err := h.workers.Claim(ctx(t), &pb.ClaimRequest{WorkerId: "w", Kinds: []string{"resize"}})
	if err != nil || len(r.GetTasks()) != 0 {
		t.Fatalf("claim of another kind: %v, %v", r, err)
	}
}

// TestClaimWaits: a waiting claim takes a task enqueued while it waits.
func TestClaimWaits(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{Poll: time.Minute}, "") // only the enqueue can wake it in time
	got := make(chan *pb.ClaimResponse, 1)
	errc := make(chan error, 1)
	go func() {
		r, err := h.workers.Claim(ctx(t), &pb.ClaimRequest{WorkerId: "w", Kinds: []string{"k"}, Wait: dpb(20 * time.Second)})
		errc <- err
		got <- r
	}()
	tk := h.enqueue(t, &pb.NewTask{Kind: "k"})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if r := <-got; len(r.GetTasks()) != 1 || r.GetTasks()[0].GetId() != tk.GetId() {
		t.Fatalf("claim %v", r)
	}
}

func TestClaimRejects(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	tests := []struct {
		req  *pb.ClaimRequest
		says []string
	}{
		{&pb.ClaimRequest{Kinds: []string{"k"}}, []string{"worker_id: missing"}},
		{&pb.ClaimRequest{WorkerId: "w 1", Kinds: []string{"k"}}, []string{"worker_id:", "not a name"}},
		{&pb.ClaimRequest{WorkerId: "w"}, []string{"kinds: empty"}},
		{&pb.ClaimRequest{WorkerId: "w", Kinds: []string{"k", ""}}, []string{"kinds[1]: missing"}},
		{&pb.ClaimRequest{WorkerId: "w", Kinds: []string{"k"}, Limit: 5000}, []string{"limit:", "want 1 to 1000"}},
		{&pb.ClaimRequest{WorkerId: "w", Kinds: []string{"k"}, Lease: dpb(time.Millisecond)}, []string{"lease:", "want 1s to 1h"}},
		{&pb.ClaimRequest{WorkerId: "w", Kinds: []string{"k"}, Wait: dpb(time.Hour)}, []string{"wait:", "1m"}},
	}
	for _, tt := range tests {
		_, err := h.workers.Claim(ctx(t), tt.req)
		wantCode(t, err, codes.InvalidArgument, tt.says...)
	}
	if ws, _ := h.store.Workers(ctx(t)); len(ws) != 0 {
		t.Fatalf("a rejected claim registered %v", ws)
	}
}

func TestFailTransientRetries(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	tk := h.enqueue(t, &pb.NewTask{Kind: "fetch", Policy: "3 1m"})
	c := h.claimOne(t, "w", "fetch")
	before := time.Now()
	r, err := h.workers.Fail(ctx(t), &pb.FailRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: c.GetLeaseToken(),
		ErrorClass: pb.ErrorClass_ERROR_CLASS_TRANSIENT, Message: "deadline exceeded"})
	if err != nil {
		t.Fatal(err)
	}
	got := r.GetTask()
	if got.GetState() != pb.TaskState_TASK_STATE_RETRYING || got.GetAttempt() != 1 || r.GetDecision() != pb.Decision_DECISION_RETRY {
		t.Fatalf("after a transient failure: %v, decision %q", got, r.GetDecision())
	}
	if next := got.GetNextAt().AsTime(); next.Before(before.Add(50*time.Second)) || got.GetLastError() != "deadline exceeded" {
		t.Fatalf("next_at %v (want about a minute on), error %q", next, got.GetLastError())
	}
	if g := h.get(t, tk.GetId()); g.GetState() != pb.TaskState_TASK_STATE_RETRYING {
		t.Fatalf("stored %v", g)
	}
	as := h.attempts(t, tk.GetId())
	if len(as) != 1 || as[0].Class != "transient" || as[0].Outcome != task.OutcomeError || as[0].Decision != "retry" {
		t.Fatalf("attempts %+v", as)
	}
	// Not due: a claim finds nothing.
	if cl, err := h.workers.Claim(ctx(t), &pb.ClaimRequest{WorkerId: "w", Kinds: []string{"fetch"}}); err != nil || len(cl.GetTasks()) != 0 {
		t.Fatalf("claimed a task not due: %v, %v", cl, err)
	}
}

// TestFailUsesTheWorkersPolicy: a remote worker's policy for the kind
// decides the failures of tasks without a policy of their own, as a Go
// handler's does; a task's own policy goes before it.
func TestFailUsesTheWorkersPolicy(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	for _, c := range []struct {
		name, taskPolicy, workerPolicy string
		taskFields, workerFields       *pb.RetryPolicy // the policies as fields, instead
		state                          pb.TaskState
		after, before                  time.Duration // next_at from the failure, when RETRYING
	}{
		{"the worker's as fields", "", "", nil, &pb.RetryPolicy{MaxAttempts: 4, Backoff: &pb.Backoff{Initial: durationpb.New(time.Hour)}}, pb.TaskState_TASK_STATE_RETRYING, 59 * time.Minute, 61 * time.Minute},
		{"the task's own as fields first", "", "3 1h", &pb.RetryPolicy{MaxAttempts: 4, Backoff: &pb.Backoff{Initial: durationpb.New(time.Minute)}}, nil, pb.TaskState_TASK_STATE_RETRYING, 59 * time.Second, 61 * time.Second},
		{"the worker's", "", "3 1h", nil, nil, pb.TaskState_TASK_STATE_RETRYING, 59 * time.Minute, 61 * time.Minute},
		{"the worker's never", "", "never", nil, nil, pb.TaskState_TASK_STATE_FAILED, 0, 0},
		{"the task's own first", "3 1m", "3 1h", nil, nil, pb.TaskState_TASK_STATE_RETRYING, 59 * time.Second, 61 * time.Second},
		{"the default without either", "", "", nil, nil, pb.TaskState_TASK_STATE_RETRYING, 0, 2 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			kind := strings.ReplaceAll(c.name, " ", "-")
			kind = strings.ReplaceAll(kind, "'", "")
			h.enqueue(t, &pb.NewTask{Kind: kind, Policy: c.taskPolicy, RetryPolicy: c.taskFields})
			cl := h.claimOne(t, "w", kind)
			before := time.Now()
			r, err := h.workers.Fail(ctx(t), &pb.FailRequest{TaskId: cl.GetId(), WorkerId: cl.GetLeaseOwner(), LeaseToken: cl.GetLeaseToken(),
				ErrorClass: pb.ErrorClass_ERROR_CLASS_TRANSIENT, Message: "timed out", Policy: c.workerPolicy, RetryPolicy: c.workerFields})
			if err != nil {
				t.Fatal(err)
			}
			got := r.GetTask()
			if got.GetState() != c.state {
				t.Fatalf("%s after a transient failure, decision %v; want %s", got.GetState(), r.GetDecision(), c.state)
			}
			if c.state != pb.TaskState_TASK_STATE_RETRYING {
				return
			}
			if d := got.GetNextAt().AsTime().Sub(before); d < c.after || d > c.before {
				t.Errorf("retry due %v after the failure; want %v to %v", d, c.after, c.before)
			}
		})
	}
}

func TestFailClasses(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	exit75 := int32(75)
	tests := []struct {
		name      string
		req       *pb.FailRequest
		state     pb.TaskState
		decision  pb.Decision
		class     string
		delayFrom time.Duration
	}{
		{"permanent", &pb.FailRequest{ErrorClass: pb.ErrorClass_ERROR_CLASS_PERMANENT, Message: "no such user"}, pb.TaskState_TASK_STATE_FAILED, pb.Decision_DECISION_PERMANENT, "permanent", 0},
		{"resource", &pb.FailRequest{ErrorClass: pb.ErrorClass_ERROR_CLASS_RESOURCE, Message: "cluster full"}, pb.TaskState_TASK_STATE_RETRYING, pb.Decision_DECISION_RETRY, "resource", 59 * time.Second},
		{"after", &pb.FailRequest{ErrorClass: pb.ErrorClass_ERROR_CLASS_AFTER, RetryAfter: dpb(10 * time.Minute), Message: "429"}, pb.TaskState_TASK_STATE_RETRYING, pb.Decision_DECISION_RETRY, "after", 9 * time.Minute},
		{"exit 75", &pb.FailRequest{ErrorClass: pb.ErrorClass_ERROR_CLASS_UNCLASSIFIED, ExitCode: &exit75, Message: "try later"}, pb.TaskState_TASK_STATE_RETRYING, pb.Decision_DECISION_RETRY, "transient", 0},
		{"timeout", &pb.FailRequest{ErrorClass: pb.ErrorClass_ERROR_CLASS_TIMEOUT, Message: "cut off after 30s"}, pb.TaskState_TASK_STATE_RETRYING, pb.Decision_DECISION_RETRY, "transient", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			kind := strings.ReplaceAll(tt.name, " ", "-")
			h.enqueue(t, &pb.NewTask{Kind: kind})
			c := h.claimOne(t, "w", kind)
			tt.req.TaskId, tt.req.LeaseToken, tt.req.WorkerId = c.GetId(), c.GetLeaseToken(), c.GetLeaseOwner()
			before := time.Now()
			r, err := h.workers.Fail(ctx(t), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if r.GetTask().GetState() != tt.state || r.GetDecision() != tt.decision {
				t.Fatalf("%v, decision %v", r.GetTask(), r.GetDecision())
			}
			if tt.delayFrom > 0 && r.GetTask().GetNextAt().AsTime().Before(before.Add(tt.delayFrom)) {
				t.Fatalf("next_at %v: want at least %v on", r.GetTask().GetNextAt().AsTime(), tt.delayFrom)
			}
			if as := h.attempts(t, c.GetId()); as[0].Class != tt.class {
				t.Fatalf("attempt class %q, want %q", as[0].Class, tt.class)
			}
		})
	}
}

// TestFailResourceIsADeferral: a remote worker's resource failure of a
// task whose policy is "never" defers the task without using its attempt,
// and the next claim carries the deferral count.
func TestFailResourceIsADeferral(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	h.enqueue(t, &pb.NewTask{Kind: "submit", Policy: "never"})
	c := h.claimOne(t, "w", "submit")
	r, err := h.workers.Fail(ctx(t), &pb.FailRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: c.GetLeaseToken(),
		ErrorClass: pb.ErrorClass_ERROR_CLASS_RESOURCE, Message: "0/3 nodes are available"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.GetTask(); got.GetState() != pb.TaskState_TASK_STATE_RETRYING || got.GetAttempt() != 0 || got.GetDeferrals() != 1 || r.GetDecision() != pb.Decision_DECISION_RETRY {
		t.Fatalf("%v, decision %q; want RETRYING, attempt 0, 1 deferral", got, r.GetDecision())
	}
}

func TestFailRejects(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	h.enqueue(t, &pb.NewTask{Kind: "k"})
	c := h.claimOne(t, "w", "k")
	tests := []struct {
		req  *pb.FailRequest
		says []string
	}{
		{&pb.FailRequest{TaskId: c.GetId(), LeaseToken: c.GetLeaseToken()}, []string{"worker_id:", "missing"}},
		{&pb.FailRequest{WorkerId: "w", LeaseToken: 1}, []string{"task_id:"}},
		{&pb.FailRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner()}, []string{"lease_token:"}},
		{&pb.FailRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: c.GetLeaseToken(), Message: "boom"},
			[]string{"error_class:", "not set", "ERROR_CLASS_TIMEOUT", "ERROR_CLASS_UNCLASSIFIED lets the task's policy and poison detection decide"}},
		{&pb.FailRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: c.GetLeaseToken(), ErrorClass: 99}, []string{"error_class:", "99 is not an error class"}},
		{&pb.FailRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: c.GetLeaseToken(), ErrorClass: pb.ErrorClass_ERROR_CLASS_CANCELED},
			[]string{"error_class:", "not a worker's class"}},
		{&pb.FailRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: c.GetLeaseToken(), ErrorClass: pb.ErrorClass_ERROR_CLASS_TRANSIENT, RetryAfter: dpb(time.Second)},
			[]string{"retry_after:", "only for class"}},
		{&pb.FailRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: c.GetLeaseToken(), ErrorClass: pb.ErrorClass_ERROR_CLASS_UNCLASSIFIED, Policy: "3 soon"},
			[]string{"policy:", `"soon"`}},
		{&pb.FailRequest{WorkerId: "w 1", TaskId: c.GetId(), LeaseToken: c.GetLeaseToken()}, []string{"worker_id:", "not a name"}},
	}
	for _, tt := range tests {
		_, err := h.workers.Fail(ctx(t), tt.req)
		wantCode(t, err, codes.InvalidArgument, tt.says...)
	}
	if g := h.get(t, c.GetId()); g.GetState() != pb.TaskState_TASK_STATE_RUNNING || g.GetAttempt() != 1 {
		t.Fatalf("a rejected Fail changed the task: %v", g)
	}
}

// TestPoison: two identical unclassified failures in a row make the task
// DEAD_LETTER, as for a Go handler.
func TestPoison(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	tk := h.enqueue(t, &pb.NewTask{Kind: "parse", Policy: "10 1ms"})
	h.failTwice(t, "parse")
	g := h.get(t, tk.GetId())
	if g.GetState() != pb.TaskState_TASK_STATE_DEAD_LETTER || g.GetAttempt() != 2 || g.GetStreak() != 2 {
		t.Fatalf("after two identical failures: %v", g)
	}
	as := h.attempts(t, tk.GetId())
	if len(as) != 2 || as[1].Decision != "poison" || as[0].Fingerprint != as[1].Fingerprint {
		t.Fatalf("attempts %+v", as)
	}
}

// TestStaleToken: a report under a lease that is not the task's is
// FAILED_PRECONDITION and changes nothing.
func TestStaleToken(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	tk := h.enqueue(t, &pb.NewTask{Kind: "k"})
	c := h.claimOne(t, "w", "k")
	stale := c.GetLeaseToken() + 1
	_, err := h.workers.Complete(ctx(t), &pb.CompleteRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: stale})
	wantCode(t, err, codes.FailedPrecondition, "lease", "not recorded")
	_, err = h.workers.Fail(ctx(t), &pb.FailRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: stale, ErrorClass: pb.ErrorClass_ERROR_CLASS_PERMANENT})
	wantCode(t, err, codes.FailedPrecondition, "lease")
	_, err = h.workers.Snooze(ctx(t), &pb.SnoozeRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: stale, Delay: dpb(time.Minute)})
	wantCode(t, err, codes.FailedPrecondition, "lease")
	if g := h.get(t, tk.GetId()); g.GetState() != pb.TaskState_TASK_STATE_RUNNING || g.GetLeaseToken() != c.GetLeaseToken() || g.GetAttempt() != 1 {
		t.Fatalf("a stale report changed the task: %v", g)
	}
	if as := h.attempts(t, tk.GetId()); len(as) != 1 || as[0].Outcome != task.OutcomeRunning {
		t.Fatalf("a stale report changed the attempt: %+v", as)
	}

	// Cancelled while running: the worker's late success is refused.
	if _, err := h.tasks.Cancel(ctx(t), &pb.CancelRequest{Id: tk.GetId()}); err != nil {
		t.Fatal(err)
	}
	_, err = h.workers.Complete(ctx(t), &pb.CompleteRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: c.GetLeaseToken()})
	wantCode(t, err, codes.FailedPrecondition, "ended INTERRUPTED", "CANCELLED")
	if g := h.get(t, tk.GetId()); g.GetState() != pb.TaskState_TASK_STATE_CANCELLED {
		t.Fatalf("after a late success: %v", g)
	}
	_, err = h.workers.Complete(ctx(t), &pb.CompleteRequest{TaskId: 999, WorkerId: "w", LeaseToken: 1})
	wantCode(t, err, codes.NotFound)
}

func TestSnoozeAndRelease(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	a := h.enqueue(t, &pb.NewTask{Kind: "k"})
	c := h.claimOne(t, "w", "k")
	s, err := h.workers.Snooze(ctx(t), &pb.SnoozeRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: c.GetLeaseToken(), Delay: dpb(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if s.GetTask().GetState() != pb.TaskState_TASK_STATE_SENSING || s.GetTask().GetAttempt() != 0 {
		t.Fatalf("snoozed %v: want SENSING with the attempt not counted", s.GetTask())
	}

	if s.GetTask().GetSnoozes() != 1 || h.get(t, a.GetId()).GetSnoozes() != 1 {
		t.Errorf("snoozed %v: want its snooze counted", s.GetTask())
	}

	b := h.enqueue(t, &pb.NewTask{Kind: "k"})
	c = h.claimOne(t, "w", "k")
	if c.GetId() != b.GetId() {
		t.Fatalf("claimed %d, want %d (%d sleeps)", c.GetId(), b.GetId(), a.GetId())
	}
	r, err := h.workers.Release(ctx(t), &pb.ReleaseRequest{WorkerId: "w", Deactivate: true, Leases: []*pb.Lease{
		{TaskId: c.GetId(), LeaseToken: c.GetLeaseToken()},
		{TaskId: a.GetId(), LeaseToken: 12345},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GetLost()) != 1 || r.GetLost()[0].GetTaskId() != a.GetId() {
		t.Fatalf("lost %v, want task %d's", r.GetLost(), a.GetId())
	}
	if g := h.get(t, b.GetId()); g.GetState() != pb.TaskState_TASK_STATE_READY || g.GetAttempt() != 0 {
		t.Fatalf("released %v: want READY with the attempt not counted", g)
	}
	if ws, err := h.store.Workers(ctx(t)); err != nil || len(ws) != 1 || ws[0].Active {
		t.Fatalf("workers %+v, %v: want w inactive", ws, err)
	}
}

// TestClaimFitsAnswer: tasks past what one answer carries are given back
// without using an attempt.
func TestClaimFitsAnswer(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{MaxAnswer: 100}, "")
	args := []byte(`"` + strings.Repeat("x", 60) + `"`)
	for range 3 {
		h.enqueue(t, &pb.NewTask{Kind: "k", Args: args})
	}
	r, err := h.workers.Claim(ctx(t), &pb.ClaimRequest{WorkerId: "w", Kinds: []string{"k"}, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GetTasks()) != 1 {
		t.Fatalf("claimed %d tasks of 62 bytes of args within 100", len(r.GetTasks()))
	}
	ts, err := h.store.ListTasks(ctx(t), task.Filter{States: []task.State{task.Ready}})
	if err != nil || len(ts) != 2 || ts[0].Attempt != 0 || ts[1].Attempt != 0 {
		t.Fatalf("given back %+v, %v: want 2 READY with no attempt used", ts, err)
	}
}

// TestRescue: the server takes over a task whose worker stopped
// heartbeating, and applies the interrupted rule (due again at once).
func TestRescue(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{Rescue: 50 * time.Millisecond}, "")
	tk := h.enqueue(t, &pb.NewTask{Kind: "k"})
	r, err := h.workers.Claim(ctx(t), &pb.ClaimRequest{WorkerId: "gone", Kinds: []string{"k"}, Lease: dpb(time.Second)})
	if err != nil || len(r.GetTasks()) != 1 {
		t.Fatalf("claim %v, %v", r, err)
	}
	// The next claim waits for the rescue, which wakes it.
	c := h.claimOne(t, "heir", "k")
	if c.GetId() != tk.GetId() || c.GetAttempt() != 2 || c.GetLeaseToken() <= r.GetTasks()[0].GetLeaseToken() {
		t.Fatalf("after the rescue, claimed %v", c)
	}
	if as := h.attempts(t, tk.GetId()); len(as) != 2 || as[0].Outcome != task.OutcomeInterrupted {
		t.Fatalf("attempts %+v", as)
	}
	_, err = h.workers.Complete(ctx(t), &pb.CompleteRequest{TaskId: tk.GetId(), WorkerId: r.GetTasks()[0].GetLeaseOwner(), LeaseToken: r.GetTasks()[0].GetLeaseToken()})
	wantCode(t, err, codes.FailedPrecondition, "ended INTERRUPTED")
}

// TestTakeoverBound: the bound docs/api.md states. A task whose remote
// worker stopped (it neither heartbeats nor reports, as when killed) is
// not claimable before its lease expires, and a waiting claim gets it
// within the lease plus the server's rescue interval (plus a margin for
// a loaded machine).
func TestTakeoverBound(t *testing.T) {
	t.Parallel()
	const lease, rescue, margin = time.Second, 1500 * time.Millisecond, time.Second
	h := start(t, server.Config{Rescue: rescue}, "")
	tk := h.enqueue(t, &pb.NewTask{Kind: "k"})
	claimed := time.Now() // before the claim: its lease runs from a moment later
	r, err := h.workers.Claim(ctx(t), &pb.ClaimRequest{WorkerId: "stopped", Kinds: []string{"k"}, Lease: dpb(lease)})
	if err != nil || len(r.GetTasks()) != 1 {
		t.Fatalf("claim %v, %v", r, err)
	}
	c := h.claimOne(t, "heir", "k") // waits up to 10s
	took := time.Since(claimed)
	if c.GetId() != tk.GetId() || c.GetAttempt() != 2 {
		t.Fatalf("the waiting claim got %v, want task %d's second attempt", c, tk.GetId())
	}
	if took < lease {
		t.Errorf("taken over %v after the claim, before its lease of %v expired", took, lease)
	}
	if took > lease+rescue+margin {
		t.Errorf("taken over %v after the claim, want within the lease %v + the rescue interval %v (+ %v)", took, lease, rescue, margin)
	}
}

func TestCompletePublishes(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	if err := h.store.Subscribe(ctx(t), task.Subscription{Topic: "resized", Kind: "notify"}); err != nil {
		t.Fatal(err)
	}
	h.enqueue(t, &pb.NewTask{Kind: "resize"})
	c := h.claimOne(t, "w", "resize")
	_, err := h.workers.Complete(ctx(t), &pb.CompleteRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: c.GetLeaseToken(),
		Publish: []*pb.Event{{Topic: "resized", Payload: []byte(`{"id":1}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	d := h.claimOne(t, "w", "notify")
	if string(d.GetArgs()) != `{"id":1}` {
		t.Fatalf("delivery %v", d)
	}
}
