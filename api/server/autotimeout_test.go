package server_test

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/internal/autotimeout"
	"github.com/grit-run/grit/task"
)

// A task enqueued with auto_timeout is kept as task.AutoTimeout and shown
// as auto_timeout; a claim's answer carries the attempt's timeout, chosen
// by the rule the engine uses, and how it was chosen.
func TestAutoTimeout(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{AutoTimeouts: autotimeout.Settings{Default: 7 * time.Minute, MinRuns: 1, Refresh: time.Nanosecond}}, "")
	tk := h.enqueue(t, &pb.NewTask{Kind: "nightly", AutoTimeout: true})
	if !tk.GetAutoTimeout() || tk.GetTimeout() != nil {
		t.Fatalf("enqueued %v, want auto_timeout and no timeout", tk)
	}
	if st, err := h.store.GetTask(ctx(t), tk.GetId()); err != nil || st.Timeout != task.AutoTimeout {
		t.Fatalf("stored timeout %v (%v), want task.AutoTimeout", st.Timeout, err)
	}
	if g := h.get(t, tk.GetId()); !g.GetAutoTimeout() || g.GetTimeout() != nil {
		t.Fatalf("got %v", g)
	}

	c := h.claimOne(t, "py-1", "nightly")
	if c.GetTimeout().AsDuration() != 7*time.Minute || c.GetTimeoutSource() != "auto: default, 0 runs so far" || !c.GetAutoTimeout() {
		t.Fatalf("claimed timeout %v (%q), want the default 7m", c.GetTimeout().AsDuration(), c.GetTimeoutSource())
	}
	if _, err := h.workers.Fail(ctx(t), &pb.FailRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: c.GetLeaseToken(), ErrorClass: pb.ErrorClass_ERROR_CLASS_TIMEOUT, Message: "cut off"}); err != nil {
		t.Fatal(err)
	}
	if as := h.attempts(t, c.GetId()); len(as) != 1 || as[0].Timeout != 7*time.Minute || as[0].TimeoutSource != "auto: default, 0 runs so far" {
		t.Fatalf("the remote attempt's record %+v: want the timeout its claim gave it", as)
	}
	// The success that follows keeps none (autotimeout.Keep), and gives
	// the kind its first run.
	c = h.claimOne(t, "py-1", "nightly")
	if _, err := h.workers.Complete(ctx(t), &pb.CompleteRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: c.GetLeaseToken()}); err != nil {
		t.Fatal(err)
	}
	if as := h.attempts(t, c.GetId()); len(as) != 2 || as[1].Outcome != task.OutcomeSuccess || as[1].Timeout != 0 || as[1].TimeoutSource != "" {
		t.Fatalf("the remote success's record %+v: want no timeout kept", as)
	}
	h.enqueue(t, &pb.NewTask{Kind: "nightly", AutoTimeout: true})
	c = h.claimOne(t, "py-1", "nightly")
	if c.GetTimeout().AsDuration() != time.Minute || !strings.HasPrefix(c.GetTimeoutSource(), "auto: 5 × p99 ") ||
		!strings.HasSuffix(c.GetTimeoutSource(), " of 1 runs, floor") {
		t.Fatalf("claimed timeout %v (%q), want the floor over 5 × p99 of 1 run", c.GetTimeout().AsDuration(), c.GetTimeoutSource())
	}

	_, err := h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: &pb.NewTask{Kind: "nightly", AutoTimeout: true, Timeout: dpb(time.Second)}})
	wantCode(t, err, codes.InvalidArgument, "auto_timeout", "set one of them")
}
